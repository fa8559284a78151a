// This level's entry point: the table of its execute functions.
#include "kernel_entry.hpp"

extern "C" const hwsim::detail::KernelTable *HWSIM_ISA_TABLE() {
  namespace k = hwsim::detail::HWSIM_ISA;
  static const hwsim::detail::KernelTable table{k::executeUnary,  k::executeBinary, k::executeFill,
                                                k::executeIncrement, k::executeMatMul, k::executeReduce,
                                                k::executeSoftmax, k::executeArgMax, k::executeConv,
                                                k::executePool, k::executeConvPrepared,
                                                k::executePoolPrepared};
  return &table;
}
