// The whole Model Runtime compatibility layer of libmrt (docs/compat.md):
// the seed's model_runtime:: and popef:: API, header-only, over libmrt.so.
#pragma once

#include "model_runtime/Callbacks.hpp"
#include "model_runtime/DeviceManager.hpp"
#include "model_runtime/MemoryPool.hpp"
#include "model_runtime/ModelRunner.hpp"
#include "model_runtime/QueueManager.hpp"
#include "model_runtime/Session.hpp"
#include "model_runtime/SessionUtils.hpp"
#include "model_runtime/SpscRingBuffer.hpp"
#include "model_runtime/Tensor.hpp"
#include "popef/Model.hpp"
#include "popef/ModelBuilder.hpp"
#include "popef/Reader.hpp"
#include "popef/Types.hpp"
#include "poplar/OptionFlags.hpp"
#include "poplar/StreamCallback.hpp"
