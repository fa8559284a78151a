// Compiled by clang++ -fsyntax-only with every warning an error
// (compat.clang_compiles_the_layer): the whole layer through its umbrella
// header. The classes are not templates, so every member is compiled.
#include "model_runtime/ModelRuntime.hpp"

int main() { return 0; }
