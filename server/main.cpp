// sluice: the RTMP media server's command line.
#include <pthread.h>
#include <uv.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/default_config.hpp"
#include "config/load.hpp"
#include "server/access_log/access_log.hpp"
#include "server/http/http_shared.hpp"
#include "server/io/logging.hpp"
#include "server/io/record_cipher.hpp"
#include "server/server.hpp"
#include "server/sign_command.hpp"
#include "server/systemd_notify.hpp"
#include "server/version.hpp"
#include "server/live/worker_mesh.hpp"

namespace {

// Closes anything left on a finished loop (listeners that failed to bind) so it can be closed.
void close_loop(uv_loop_t* loop) {
  uv_walk(
      loop,
      [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
}

// Worker 0 runs on this thread (listeners, HTTP, signals); the others each on a thread of their
// own. A worker's loop ends when a stop has closed its connections and handles.
int run_server(sluice::config::Config cfg) {
  using sluice::server::Server;
  sluice::server::init_logging(cfg.log);
  SLUICE_LOG_INFO("event=start version={} config=\"{}\"", sluice::server::version(), cfg.source);
  for (const auto& line : {sluice::config::to_yaml(cfg)}) SLUICE_LOG_INFO("effective configuration:\n{}", line);
  const size_t workers = cfg.workers == 0 ? std::max<size_t>(1, uv_available_parallelism()) : cfg.workers;
  std::unique_ptr<sluice::server::WorkerMesh> mesh;
  if (workers > 1) mesh = std::make_unique<sluice::server::WorkerMesh>(workers);
  sluice::server::HlsDirectory hls;  // outlives the servers
  sluice::server::HttpShared http;   // likewise
  std::vector<std::unique_ptr<uv_loop_t>> loops;
  std::vector<std::unique_ptr<Server>> servers;
  // One immutable snapshot shared by every loop until a reload replaces it (docs/configuration.md).
  const sluice::config::ConfigSnapshot snapshot = sluice::server::make_config_snapshot(cfg);
  for (size_t i = 0; i < workers; ++i) {
    loops.push_back(std::make_unique<uv_loop_t>());
    uv_loop_init(loops.back().get());
    servers.push_back(
        std::make_unique<Server>(loops.back().get(), snapshot, mesh.get(), static_cast<uint32_t>(i), &hls, &http));
  }
  SLUICE_LOG_INFO("event=workers count={}", workers);
  if ((cfg.rtmps.enabled() && cfg.rtmps.seal_records) || (cfg.https.enabled() && cfg.https.seal_records)) {
    // Who runs the cipher of the records Sluice seals (docs/tls.md, "Records").
    SLUICE_LOG_INFO("event=tls_records aes_gcm=\"{}\" chacha20_poly1305=\"{}\"",
                    sluice::server::RecordCipher::engine(0x1301), sluice::server::RecordCipher::engine(0x1303));
  }
  int status = 0;
  // The others first: they must be in the mesh before worker 0 accepts anything for them.
  for (size_t i = workers; i-- > 0;) {
    auto started = servers[i]->start();
    if (!started) {
      SLUICE_LOG_ERROR("event=start_failed error=\"{}\"", started.error().message());
      status = 1;
      break;
    }
  }
  // Every worker serves HTTP: the others listen on the ports worker 0 has bound.
  for (size_t i = 1; i < workers && status == 0; ++i) {
    auto joined = servers[i]->join_http(*servers[0]);
    if (!joined) {
      SLUICE_LOG_ERROR("event=start_failed error=\"{}\"", joined.error().message());
      status = 1;
    }
  }
  if (status != 0) {
    for (auto& s : servers) s->stop();
  }
  // systemd's READY=1 now that every listener is bound, STOPPING=1 on SIGTERM (docs/deploy.md).
  sluice::server::SystemdNotifier notifier(loops[0].get(), cfg.shutdown.drain.count());
  if (status == 0) notifier.ready(*servers[0]);
  auto access_log = sluice::server::watch_access_log_reopen(loops[0].get(), cfg.access_log);  // SIGUSR1 reopens it
  servers[0]->set_reload_observer([&notifier](const sluice::server::ReloadReport* r) {
    if (r == nullptr) return notifier.reloading();
    notifier.reloaded(std::string("Configuration reload: ") + sluice::server::reload_result_name(r->result));
  });
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) {
    threads.emplace_back([loop = loops[i].get(), i] {
      // Named for top -H, perf and bench/lib.sh's per-loop CPU quota; loop 0 is the main thread.
      const std::string name = "sluice-loop-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      uv_run(loop, UV_RUN_DEFAULT);
    });
  }
  uv_run(loops[0].get(), UV_RUN_DEFAULT);
  for (auto& t : threads) t.join();
  for (auto& s : servers) s->close_mesh_handle();
  for (auto& loop : loops) uv_run(loop.get(), UV_RUN_DEFAULT);
  servers.clear();
  for (auto& loop : loops) close_loop(loop.get());
  SLUICE_LOG_INFO("event=exit status={}", status);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sluice: an RTMP streaming media server (live, VOD, HTTP-FLV)", "sluice"};
  std::string config_path;
  std::string check_path;
  bool print_default = false;
  bool version = false;
  app.add_option("-c,--config", config_path, "YAML configuration file (default: the embedded configuration)");
  app.add_option("--check-config", check_path, "Validate a configuration file, print the effective settings and exit");
  app.add_flag("--print-default-config", print_default, "Print the embedded default configuration and exit");
  app.add_flag("-V,--version", version, "Print the version (from git) and the build options, and exit");
  sluice::server::SignOptions sign;
  CLI::App* sign_cmd = app.add_subcommand("sign", "Print a signed URL (?expires=...&sign=...) for an app and stream");
  sign_cmd->add_option("-c,--config", sign.config_path, "The configuration whose secret signs (default: embedded)");
  sign_cmd->add_option("--app", sign.app, "App name, e.g. live")->required();
  sign_cmd->add_option("--stream", sign.stream, "Stream name (a VOD file's path for VOD apps)")->required();
  sign_cmd->add_option("--action", sign.action, "play or publish (default play)");
  sign_cmd->add_option("--ttl", sign.ttl, "How long the URL is valid, e.g. 30m, 2h (default 1h)");
  sign_cmd->add_option(
      "--url", sign.url,
      "The URL to sign, e.g. http://host:8080/live/cam.flv (default rtmp://127.0.0.1:<port>/<app>/<stream>)");
  sign_cmd->add_option("--now", sign.now_s, "Sign as if at this UNIX time (tests)");
  CLI11_PARSE(app, argc, argv);
  if (*sign_cmd) return sluice::server::run_sign_command(sign);

  if (version) {
    std::cout << "sluice " << sluice::server::version() << "\ngit: " << sluice::server::git_version()
              << "\nbuild: " << sluice::server::build_options() << "\n";
    return 0;
  }
  if (print_default) {
    std::cout << sluice::config::default_config_yaml();
    return 0;
  }
  if (!check_path.empty()) {
    auto cfg = sluice::config::load_file(check_path);
    if (!cfg) {
      std::cerr << cfg.error().context << "\n";
      return 2;
    }
    std::cout << "# " << check_path << ": OK\n" << sluice::config::to_yaml(*cfg);
    return 0;
  }
  auto cfg = config_path.empty() ? sluice::config::load_default() : sluice::config::load_file(config_path);
  if (!cfg) {
    std::cerr << "sluice: invalid configuration:\n" << cfg.error().context << "\n";
    return 2;
  }
  return run_server(std::move(*cfg));
}
