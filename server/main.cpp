// sluice: the RTMP media server's command line.
#include <uv.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "config/default_config.hpp"
#include "config/load.hpp"
#include "server/logging.hpp"
#include "server/server.hpp"

namespace {

int run_server(sluice::config::Config cfg) {
  sluice::server::init_logging(cfg.log);
  SLUICE_LOG_INFO("event=start version={} config=\"{}\"", SLUICE_VERSION, cfg.source);
  for (const auto& line : {sluice::config::to_yaml(cfg)}) SLUICE_LOG_INFO("effective configuration:\n{}", line);
  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = 0;
  {
    sluice::server::Server server(&loop, std::move(cfg));
    auto started = server.start();
    if (!started) {
      SLUICE_LOG_ERROR("event=start_failed error=\"{}\"", started.error().message());
      server.stop();
      status = 1;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  // Close anything left (listeners that failed to bind) so the loop can be closed.
  uv_walk(
      &loop, [](uv_handle_t* h, void*) { if (!uv_is_closing(h)) uv_close(h, nullptr); }, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
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
  app.add_flag("-V,--version", version, "Print the version and exit");
  CLI11_PARSE(app, argc, argv);

  if (version) {
    std::printf("sluice %s\n", SLUICE_VERSION);
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
