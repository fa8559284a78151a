// Compiled by clang++ -fsyntax-only with every warning an error
// (compat.clang_compiles_the_layer): the whole layer through its umbrella
// header. Its classes other than SpscRingBuffer are not templates, so every
// member is compiled; SpscRingBuffer is instantiated below.
#include "model_runtime/ModelRuntime.hpp"

// The class templates, instantiated as applications use them.
template class model_runtime::SpscRingBuffer<model_runtime::InputData>;
template class model_runtime::SpscRingBuffer<int>;

int main() { return 0; }
