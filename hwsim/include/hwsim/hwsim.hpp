// The whole hwsim API in one include.
#pragma once

#include "hwsim/codelets.hpp"
#include "hwsim/compiler.hpp"
#include "hwsim/device.hpp"
#include "hwsim/device_error.hpp"
#include "hwsim/engine.hpp"
#include "hwsim/error.hpp"
#include "hwsim/executable.hpp"
#include "hwsim/graph.hpp"
#include "hwsim/ops.hpp"
#include "hwsim/options.hpp"
#include "hwsim/pipeline.hpp"
#include "hwsim/program.hpp"
#include "hwsim/target.hpp"
#include "hwsim/tensor.hpp"
#include "hwsim/types.hpp"
