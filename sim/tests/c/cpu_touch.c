/* Device memory and the CPU: `cpu_touch nobar` expects what strict hsasim models by default
 * (no large BAR: the CPU agent's access to the GPU pool reads NEVER_ALLOWED, copies and
 * fills still reach the memory, and a CPU store into it kills the process, which the test
 * expects, after hsasim names the rule); `cpu_touch bar` runs with HSASIM_LARGE_BAR=1 and
 * expects DISALLOWED_BY_DEFAULT and a CPU that reads and writes device memory. */
#include <string.h>
#include "hsasim_test.h"

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: cpu_touch bar|nobar");
  int large_bar = strcmp(argv[1], "bar") == 0;
  agents_t ag = init_hsasim();
  hsa_amd_memory_pool_t dev_pool = find_pool(ag.gpu, 0, 1);
  hsa_amd_memory_pool_access_t access = 99;
  OK(hsa_amd_agent_memory_pool_get_info(ag.cpu, dev_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
                                        &access));
  CHECK(access == (large_bar ? HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
                             : HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED),
        "CPU access to the GPU pool: %d", (int)access);

  enum { WORDS = 1024 };
  uint32_t *dev = NULL;
  OK(hsa_amd_memory_pool_allocate(dev_pool, WORDS * 4, 0, (void **)&dev));
  /* What a client without a large BAR does: fill, copy in, copy out. */
  OK(hsa_amd_memory_fill(dev, 0x01020304, WORDS));
  uint32_t seven = 7, back[WORDS];
  OK(hsa_memory_copy(dev + 5, &seven, 4));
  OK(hsa_memory_copy(back, dev, sizeof back));
  CHECK(back[4] == 0x01020304 && back[5] == 7, "device memory through copies: %#x %#x", back[4],
        back[5]);
  hsa_amd_pointer_info_t info = {.size = sizeof info};
  OK(hsa_amd_pointer_info(dev + 5, &info, NULL, NULL, NULL));
  CHECK(info.agentBaseAddress == dev && info.hostBaseAddress == dev,
        "pointer info bases %p/%p for %p", info.agentBaseAddress, info.hostBaseAddress,
        (void *)dev);

  printf("touching %p\n", (void *)(dev + 5));
  fflush(stdout);
  volatile uint32_t *cpu_view = dev;
  CHECK(cpu_view[5] == 7, "CPU read %#x", cpu_view[5]);
  cpu_view[6] = 8;
  OK(hsa_memory_copy(back, dev, sizeof back));
  CHECK(back[6] == 8, "CPU store seen by copies: %#x", back[6]);
  OK(hsa_amd_memory_pool_free(dev));
  OK(hsa_shut_down());
  printf("cpu_touch: ok\n");
  return 0;
}
