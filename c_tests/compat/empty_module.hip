// hipModuleLoad of a file that exists but is empty, per ROCm ABI: ROCm 5.2 answers
// hipErrorInvalidKernelFile (as measured on hsasim), ROCm 6 hipErrorInvalidValue, ROCm 7
// hipErrorInvalidImage (AMD's "HIP API 7.0 changes", CUDA's code). A missing file is
// hipErrorFileNotFound in every ABI.
#include "../check.h"
#include "abi.h"

#include <string>
#include <unistd.h>

int main() {
    const int abi = expected_abi();
    const hipError_t want = abi == 5   ? hipErrorInvalidKernelFile
                            : abi == 6 ? hipErrorInvalidValue
                                       : hipErrorInvalidImage;
    std::string path = "/tmp/hipshim-compat-empty-" + std::to_string(getpid()) + ".co";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 1;
    std::fclose(f);
    hipModule_t module = nullptr;
    EXPECT_ERR(hipModuleLoad(&module, path.c_str()), want);
    std::remove(path.c_str());
    EXPECT_ERR(hipModuleLoad(&module, path.c_str()), hipErrorFileNotFound);
    return finish("empty_module");
}
