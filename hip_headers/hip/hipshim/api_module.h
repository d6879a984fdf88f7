// Modules, functions and occupancy.
#ifndef HIPSHIM_API_MODULE_H
#define HIPSHIM_API_MODULE_H

#include "hip_error.h"
#include "hip_types.h"

#endif // HIPSHIM_API_MODULE_H
