// server/io/loop_context.hpp: the configuration snapshot a reload swaps, and keep(), which holds an
// app beyond the callback it was found in (docs/configuration.md, "Reload").
#include <doctest/doctest.h>
#include <uv.h>

#include <memory>
#include <thread>

#include "config/config.hpp"
#include "server/io/loop_context.hpp"

using namespace sluice;

namespace {

config::ConfigSnapshot config_with(const char* app_name, const char* key) {
  auto c = std::make_shared<config::Config>();
  config::AppConfig app;
  app.name = app_name;
  app.publish.keys.push_back(key);
  c->apps.push_back(app);
  return c;
}

}  // namespace

TEST_CASE("an app kept before a reload stays whole after it, and the next lookup sees the new file") {
  uv_loop_t uv{};
  uv_loop_init(&uv);
  {
    server::LoopContext loop(&uv, config_with("live", "old-key"), 0);
    const config::AppConfig* found = loop.config().find_app("live");
    REQUIRE(found != nullptr);
    config::AppRef kept = loop.keep(*found);
    CHECK(kept.get() == found);  // the snapshot's own app, not a copy

    loop.set_config(config_with("news", "new-key"));
    CHECK(loop.config().find_app("live") == nullptr);
    REQUIRE(loop.config().find_app("news") != nullptr);
    // The old snapshot lives on with the hold (ASan would see a use after free otherwise).
    CHECK(kept->name == "live");
    CHECK(kept->publish.keys.at(0) == "old-key");

    // An app of an older snapshot given to keep() is copied: the copy owns itself.
    config::AppRef again = loop.keep(*kept);
    CHECK(again.get() != kept.get());
    kept.reset();
    CHECK(again->name == "live");
  }
  CHECK(uv_loop_close(&uv) == 0);
}

TEST_CASE("another thread's hold of the snapshot survives a swap on the loop") {
  uv_loop_t uv{};
  uv_loop_init(&uv);
  {
    server::LoopContext loop(&uv, config_with("live", "k"), 0);
    std::thread reader([&] {
      for (int i = 0; i < 2000; ++i) {
        config::ConfigSnapshot held = loop.snapshot_from_any_thread();
        CHECK(held->apps.size() == 1);
      }
    });
    for (int i = 0; i < 2000; ++i) loop.set_config(config_with(i % 2 ? "live" : "news", "k"));
    reader.join();
  }
  CHECK(uv_loop_close(&uv) == 0);
}
