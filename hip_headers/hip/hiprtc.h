// hipshim HIP headers: hiprtc, runtime compilation of HIP source.
//
// hipshim's libamdhip64 exports these (as ROCm 5's does); its lib dir also answers to
// libhiprtc.so.* (ROCm 6 and 7 ship them there). Compiling runs a clang found at run time
// (HIPSHIM_RTC_CLANG, else clang++-19 ...) with these headers: a program's source sees
// hip/hip_runtime.h without including it, and __HIPCC_RTC__ is defined.
#ifndef HIP_HIPRTC_H
#define HIP_HIPRTC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Values as in ROCm 6's hiprtc.h (ROCm 5.2's list, with HIPRTC_ERROR_LINKING added at 100).
typedef enum hiprtcResult {
    HIPRTC_SUCCESS = 0,
    HIPRTC_ERROR_OUT_OF_MEMORY = 1,
    HIPRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
    HIPRTC_ERROR_INVALID_INPUT = 3,
    HIPRTC_ERROR_INVALID_PROGRAM = 4,
    HIPRTC_ERROR_INVALID_OPTION = 5,
    HIPRTC_ERROR_COMPILATION = 6,
    HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
    HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
    HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
    HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
    HIPRTC_ERROR_INTERNAL_ERROR = 11,
    HIPRTC_ERROR_LINKING = 100
} hiprtcResult;

// Link options. hipshim uses the two _EXT ones (compiler options for the link, e.g.
// "-march=gfx90a"); the others are CUDA's and are accepted and ignored.
typedef enum hiprtcJIT_option {
    HIPRTC_JIT_MAX_REGISTERS = 0,
    HIPRTC_JIT_THREADS_PER_BLOCK,
    HIPRTC_JIT_WALL_TIME,
    HIPRTC_JIT_INFO_LOG_BUFFER,
    HIPRTC_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    HIPRTC_JIT_ERROR_LOG_BUFFER,
    HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    HIPRTC_JIT_OPTIMIZATION_LEVEL,
    HIPRTC_JIT_TARGET_FROM_HIPCONTEXT,
    HIPRTC_JIT_TARGET,
    HIPRTC_JIT_FALLBACK_STRATEGY,
    HIPRTC_JIT_GENERATE_DEBUG_INFO,
    HIPRTC_JIT_LOG_VERBOSE,
    HIPRTC_JIT_GENERATE_LINE_INFO,
    HIPRTC_JIT_CACHE_MODE,
    HIPRTC_JIT_NEW_SM3X_OPT,
    HIPRTC_JIT_FAST_COMPILE,
    HIPRTC_JIT_GLOBAL_SYMBOL_NAMES,
    HIPRTC_JIT_GLOBAL_SYMBOL_ADDRESS,
    HIPRTC_JIT_GLOBAL_SYMBOL_COUNT,
    HIPRTC_JIT_LTO,
    HIPRTC_JIT_FTZ,
    HIPRTC_JIT_PREC_DIV,
    HIPRTC_JIT_PREC_SQRT,
    HIPRTC_JIT_FMA,
    HIPRTC_JIT_NUM_OPTIONS,
    HIPRTC_JIT_IR_TO_ISA_OPT_EXT = 10000,
    HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT
} hiprtcJIT_option;

// What a link input is. An AMD GPU links LLVM bitcode (plain or in an offload bundle);
// hipshim refuses the others with HIPRTC_ERROR_INVALID_INPUT.
typedef enum hiprtcJITInputType {
    HIPRTC_JIT_INPUT_CUBIN = 0,
    HIPRTC_JIT_INPUT_PTX,
    HIPRTC_JIT_INPUT_FATBINARY,
    HIPRTC_JIT_INPUT_OBJECT,
    HIPRTC_JIT_INPUT_LIBRARY,
    HIPRTC_JIT_INPUT_NVVM,
    HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES,
    HIPRTC_JIT_INPUT_LLVM_BITCODE = 100,
    HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE = 101,
    HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE = 102,
    HIPRTC_JIT_NUM_INPUT_TYPES = (HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES + 3)
} hiprtcJITInputType;

typedef struct _hiprtcProgram* hiprtcProgram;
typedef struct ihiprtcLinkState* hiprtcLinkState;

// The result's enumerator name ("HIPRTC_ERROR_COMPILATION").
const char* hiprtcGetErrorString(hiprtcResult result);
hiprtcResult hiprtcVersion(int* major, int* minor);

// headers[i] is the text #include "includeNames[i]" finds. name is the file name the
// source is compiled (and the log refers to it) under.
hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name,
                                 int numHeaders, const char** headers,
                                 const char** includeNames);
hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog);
// Options: clang's, plus --gpu-architecture=ARCH (default: the current device's) and
// -fgpu-rdc (bitcode for hiprtcGetBitcode instead of a code object).
hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, const char** options);
// Before compiling: an expression naming a kernel or device variable ("&kern<int>");
// after: the mangled name it lowered to, valid while the program lives.
hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char* name_expression);
hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char* name_expression,
                                  const char** lowered_name);
// The size counts the terminating NUL; it is 0 while there is no log.
hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t* logSizeRet);
hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char* log);
// The code object, for hipModuleLoadData.
hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t* codeSizeRet);
hiprtcResult hiprtcGetCode(hiprtcProgram prog, char* code);
hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* bitcode_size);
hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode);

hiprtcResult hiprtcLinkCreate(unsigned int num_options, hiprtcJIT_option* option_ptr,
                              void** option_vals_pptr, hiprtcLinkState* hip_link_state_ptr);
hiprtcResult hiprtcLinkAddFile(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
                               const char* file_path, unsigned int num_options,
                               hiprtcJIT_option* options_ptr, void** option_values);
hiprtcResult hiprtcLinkAddData(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
                               void* image, size_t image_size, const char* name,
                               unsigned int num_options, hiprtcJIT_option* options_ptr,
                               void** option_values);
// *bin_out stays valid until the link state is destroyed.
hiprtcResult hiprtcLinkComplete(hiprtcLinkState hip_link_state, void** bin_out,
                                size_t* size_out);
hiprtcResult hiprtcLinkDestroy(hiprtcLinkState hip_link_state);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // HIP_HIPRTC_H
