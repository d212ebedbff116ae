// Runs a step of one of the library's own threads (the worker, the profile loader) with no
// exception let out: one leaving the thread would end the program (std::terminate), which
// the library must never do to the program it observes.
#pragma once

#include <exception>

namespace pm2lat::shim {

// `report` (noexcept) is told what went wrong: the exception's what(), or that it was not
// a std::exception.
template <typename Step, typename Report>
void run_contained(Step&& step, Report&& report) noexcept {
  try {
    step();
  } catch (const std::exception& e) {
    report(e.what());
  } catch (...) {
    report("an unknown error");
  }
}

}  // namespace pm2lat::shim
