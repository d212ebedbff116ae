#include "diagnostics.h"

#include <unistd.h>

#include <mutex>
#include <new>
#include <set>

namespace pm2lat::shim {

struct Diagnostics::State {
  std::mutex mu;
  std::set<std::string, std::less<>> keys;
  std::vector<std::string> messages;
};

Diagnostics& Diagnostics::instance() {
  static Diagnostics* d = [] {
    auto* diag = new Diagnostics();
    diag->state_ = new State();
    return diag;
  }();
  return *d;
}

void Diagnostics::write_line(std::string_view message) const noexcept {
  std::string line = "pm2lat: ";
  line += message;
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void Diagnostics::warn_once(std::string_view key, std::string_view message) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->keys.emplace(key).second) return;
    state_->messages.emplace_back(message);
  }
  if (level_ != LogLevel::kOff) write_line(message);
}

void Diagnostics::info(std::string_view message) {
  if (level_ == LogLevel::kInfo) write_line(message);
}

std::vector<std::string> Diagnostics::warnings() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->messages;
}

void Diagnostics::reset_lock_after_fork() noexcept { new (&state_->mu) std::mutex(); }

}  // namespace pm2lat::shim
