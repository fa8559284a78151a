// Included by every kernels TU. Each is compiled once per x86-64 level with
// HWSIM_ISA naming that level's namespace (isa_baseline, isa_v3, isa_v4) and
// HWSIM_ISA_TABLE its one entry point; hwsim_add_kernels then makes every
// other symbol of the level local, so the inline functions and templates
// (Eigen, the standard library) one level instantiates with its instructions
// are never picked by the linker for another level's code.
#pragma once

#ifndef HWSIM_ISA
#error "hwsim/kernels/ is compiled only through hwsim_add_kernels (hwsim/CMakeLists.txt)"
#endif

#include "codelets/kernels.hpp"

extern "C" const hwsim::detail::KernelTable *HWSIM_ISA_TABLE();

namespace hwsim::detail::HWSIM_ISA {

void executeUnary(const CodeletSpec &, const Operand *, const Attrs &);
void executeBinary(const CodeletSpec &, const Operand *, const Attrs &);
void executeFill(const CodeletSpec &, const Operand *, const Attrs &);
void executeIncrement(const CodeletSpec &, const Operand *, const Attrs &);
void executeMatMul(const CodeletSpec &, const Operand *, const Attrs &);
void executeReduce(const CodeletSpec &, const Operand *, const Attrs &);
void executeSoftmax(const CodeletSpec &, const Operand *, const Attrs &);
void executeArgMax(const CodeletSpec &, const Operand *, const Attrs &);
void executeConv(const CodeletSpec &, const Operand *, const Attrs &);
void executePool(const CodeletSpec &, const Operand *, const Attrs &);
void executeConvPrepared(const CodeletSpec &, const Operand *, const Attrs &, const void *geometry);
void executePoolPrepared(const CodeletSpec &, const Operand *, const Attrs &, const void *geometry);

}  // namespace hwsim::detail::HWSIM_ISA
