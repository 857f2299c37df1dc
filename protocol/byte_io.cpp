#include "protocol/byte_io.hpp"
