#include "capi/engine_print.hpp"

namespace mrt::capi {

PrintLines::PrintLines(mrt_print_fn fn, std::shared_ptr<UserData> userData)
    : buffer_(fn, std::move(userData)), stream_(&buffer_) {}

std::streamsize PrintLines::Buffer::xsputn(const char *s, std::streamsize n) {
  std::lock_guard lock(mutex_);
  pending_.append(s, static_cast<std::size_t>(n));
  emitLines();
  return n;
}

PrintLines::Buffer::int_type PrintLines::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  xsputn(&ch, 1);
  return c;
}

void PrintLines::Buffer::emitLines() {
  std::size_t begin = 0;
  for (std::size_t end; (end = pending_.find('\n', begin)) != std::string::npos; begin = end + 1) {
    const std::string line = pending_.substr(begin, end - begin);
    try {
      fn_(line.c_str(), userData_->get());
    } catch (...) {
      // A C++ caller's exception must not unwind through the engine's run.
    }
  }
  pending_.erase(0, begin);
}

}  // namespace mrt::capi
