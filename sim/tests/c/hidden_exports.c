/* HSASIM_HIDE (set by the test to hide hsa_amd_memory_async_copy_on_engine and
 * hsa_amd_memory_copy_engine_status): the hidden names are not found by dlsym, the library
 * and its other exports load and work as before. */
#include <dlfcn.h>
#include <stdio.h>
#include <hsa/hsa.h>

int main(void) {
    void *lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    const char *hidden[] = {"hsa_amd_memory_async_copy_on_engine",
                            "hsa_amd_memory_copy_engine_status"};
    for (int i = 0; i < 2; i++) {
        if (dlsym(lib, hidden[i])) {
            printf("%s is still found\n", hidden[i]);
            return 1;
        }
    }
    hsa_status_t (*init)(void) = (hsa_status_t (*)(void))dlsym(lib, "hsa_init");
    hsa_status_t (*shut_down)(void) = (hsa_status_t (*)(void))dlsym(lib, "hsa_shut_down");
    if (!init || !shut_down || dlsym(lib, "hsa_amd_memory_async_copy") == NULL) {
        printf("an export that was not hidden is missing\n");
        return 1;
    }
    if (init() != HSA_STATUS_SUCCESS || shut_down() != HSA_STATUS_SUCCESS) {
        printf("hsa_init/hsa_shut_down failed with names hidden\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
