// hipshim HIP headers: the host API of libamdhip64.
//
// Declarations only; hipshim's libamdhip64.so (or AMD's) provides them. One header per
// area under hipshim/, in the order of AMD's documentation, so each area grows in place.
#ifndef HIP_HIP_RUNTIME_API_H
#define HIP_HIP_RUNTIME_API_H

#include <stddef.h>

#include "hipshim/hip_error.h"
#include "hipshim/hip_types.h"
#include "hipshim/host_defines.h"
#include "hipshim/launch.h"

#include "hipshim/api_device.h"
#include "hipshim/api_error.h"
#include "hipshim/api_memory.h"
#include "hipshim/api_stream.h"
#include "hipshim/api_event.h"
#include "hipshim/api_module.h"

#endif // HIP_HIP_RUNTIME_API_H
