// A program outside the hwaccel tree that imports its modules: replays the
// fixture folder named on the command line and prints the registry JSON
// (as a fixture's expected.json holds it), then the library version on stderr.
#include <cstdio>
#include <string>

import hwaccel;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  auto fixture = hwaccel::FixtureSystem::open(argv[1]);
  if (!fixture) {
    std::fprintf(stderr, "cannot replay %s: %s\n", argv[1], fixture.error().message.c_str());
    return 1;
  }
  const hwaccel::AcceleratorRegistry registry = hwaccel::DetectBuilder{}.detect(**fixture);
  const std::string json = hwaccel::to_json(registry, {.pretty = true, .include_timings = false});
  std::fwrite(json.data(), 1, json.size(), stdout);
  for (const auto& device : registry.devices())
    std::fprintf(stderr, "hwaccel %s: %s %s\n", std::string(hwaccel::library_version()).c_str(), device.id.c_str(),
                 device.name.c_str());
  return 0;
}
