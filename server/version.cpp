// Placeholder so the library has a source until the server lands.
namespace sluice::server {
const char* version() { return SLUICE_VERSION; }
}  // namespace sluice::server
