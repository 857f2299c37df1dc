// MetricsText: the Prometheus text format as /metrics writes it (server/api/metrics_text.cpp and
// the wings' own families): a family's HELP and TYPE lines, then its series.
#pragma once

#include <cstdio>
#include <string>

namespace sluice::server {

struct MetricsText {
  std::string& m;
  void metric(const char* name, const char* type, const char* help) {
    m += "# HELP ";
    m += name;
    m += ' ';
    m += help;
    m += "\n# TYPE ";
    m += name;
    m += ' ';
    m += type;
    m += '\n';
  }
  void value(const std::string& series, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.15g\n", v);
    m += series;
    m += buf;
  }
};

}  // namespace sluice::server
