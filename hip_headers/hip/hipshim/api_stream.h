// Streams.
#ifndef HIPSHIM_API_STREAM_H
#define HIPSHIM_API_STREAM_H

#include "hip_error.h"
#include "hip_types.h"

#endif // HIPSHIM_API_STREAM_H
