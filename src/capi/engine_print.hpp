// PrintTensor output for a C print callback (mrt_engine_set_print_callback):
// an std::ostream the hwsim engine writes to, which hands the callback one
// line per call, without the newline.
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

#include "capi/user_data.hpp"
#include "mrt_c.h"

namespace mrt::capi {

class PrintLines {
 public:
  PrintLines(mrt_print_fn fn, std::shared_ptr<UserData> userData);
  std::ostream &stream() noexcept { return stream_; }

 private:
  // Unbuffered, so each write reaches xsputn: replicas running on several
  // threads write whole "title: [...]\n" texts, and the mutex keeps their
  // lines apart.
  class Buffer final : public std::streambuf {
   public:
    Buffer(mrt_print_fn fn, std::shared_ptr<UserData> userData) : fn_(fn), userData_(std::move(userData)) {}

   protected:
    std::streamsize xsputn(const char *s, std::streamsize n) override;
    int_type overflow(int_type c) override;

   private:
    void emitLines();  // with mutex_ held
    mrt_print_fn fn_;
    std::shared_ptr<UserData> userData_;
    std::mutex mutex_;
    std::string pending_;  // text after the last newline
  };

  Buffer buffer_;
  std::ostream stream_;
};

}  // namespace mrt::capi
