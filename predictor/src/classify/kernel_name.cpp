// Name normalisation: the same kernel arrives mangled (driver, CUPTI), demangled with its
// argument list (Kineto) or wrapped in a CUTLASS launcher template. Everything downstream
// keys on the reduced form produced here.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "classify/name_parts.h"
#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

std::string demangle_if_mangled(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  int status = 0;
  const std::string mangled(name);
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return mangled;
  return std::string(out.get());
}

// Drops a return type ("void ", "std::enable_if<...>::type ") written before the name.
std::string_view strip_return_type(std::string_view s) {
  int depth = 0;
  std::size_t last_space = std::string_view::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == '(' && depth == 0) {
      if (s.substr(i, kAnonymous.size()) == kAnonymous) {
        i += kAnonymous.size() - 1;
        continue;
      }
      break;  // argument list: any return type came before
    }
    if (c == ' ' && depth == 0) last_space = i;
  }
  if (last_space == std::string_view::npos) return s;
  return s.substr(last_space + 1);
}

// Cuts the argument list: the first '(' at template depth 0 that is not "(anonymous ...".
std::string_view strip_arguments(std::string_view s) {
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (c == '(' && depth <= 0) {
      if (s.substr(i, kAnonymous.size()) == kAnonymous) {
        i += kAnonymous.size() - 1;
        continue;
      }
      return s.substr(0, i);
    }
  }
  return s;
}

// "cutlass::Kernel<cutlass_80_simt_sgemm_...>" -> "cutlass_80_simt_sgemm_..." when the
// template argument is a plain identifier (a cuBLAS/cuDNN-generated CUTLASS kernel).
std::string_view unwrap_cutlass_launcher(std::string_view s) {
  const std::size_t open = s.find("::Kernel");
  if (open == std::string_view::npos) return s;
  const std::size_t lt = s.find('<', open);
  if (lt == std::string_view::npos || s.back() != '>') return s;
  const std::string_view head = s.substr(0, open);
  if (head.find("cutlass") == std::string_view::npos) return s;
  const std::string_view inner = s.substr(lt + 1, s.size() - lt - 2);
  for (char c : inner) {
    const bool ident =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ident) return s;
  }
  return inner.empty() ? s : inner;
}

}  // namespace

std::string normalize_kernel_name(std::string_view name) {
  const std::string demangled = demangle_if_mangled(trim(name));
  std::string_view s = trim(demangled);
  s = strip_return_type(s);
  s = strip_arguments(s);
  s = trim(s);
  s = unwrap_cutlass_launcher(s);
  return std::string(s);
}

}  // namespace pm2lat
