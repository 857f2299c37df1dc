// What `sluice --version` prints. Defined in a file generated at every build from git
// (cmake/write_version.cmake), compiled into the sluice executable only.
#pragma once

#include <string_view>

namespace sluice::server {

// The package's version: 1.2.3 at tag v1.2.3, 1.2.3+git<n>.g<hash> after it, 0.1.0~git<n>.g<hash>
// before the first tag, ".dirty" for a modified tree; the project version outside git.
std::string_view version();
// `git describe` of the tree it was built from (or that it was not built from git).
std::string_view git_version();
// key=value pairs: build type, sanitizers, compiler, libsystemd, intel-ipsec-mb.
std::string_view build_options();

}  // namespace sluice::server
