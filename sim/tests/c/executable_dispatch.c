/* Executables: a clang-19 code object (argv[1]) read from a file and from memory, loaded,
 * frozen, its symbols iterated and looked up, kernel info read, and the kernel dispatched
 * on an AQL queue; the result is checked. Error cases: loading into a frozen executable,
 * an unknown symbol, a garbage code object. */
#include <fcntl.h>
#include <unistd.h>
#include "hsasim_test.h"

typedef struct {
  int kernels, variables;
} counts_t;

static hsa_status_t count_cb(hsa_executable_t e, hsa_executable_symbol_t s, void *data) {
  (void)e;
  counts_t *c = (counts_t *)data;
  hsa_symbol_kind_t kind;
  OK(hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
  if (kind == HSA_SYMBOL_KIND_KERNEL) c->kernels++;
  if (kind == HSA_SYMBOL_KIND_VARIABLE) c->variables++;
  return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: executable_dispatch CODE_OBJECT");
  agents_t ag = init_hsasim();

  int fd = open(argv[1], O_RDONLY);
  CHECK(fd >= 0, "cannot open %s", argv[1]);
  hsa_code_object_reader_t reader;
  OK(hsa_code_object_reader_create_from_file(fd, &reader));
  close(fd);
  hsa_executable_t exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL,
                               &exe));
  hsa_loaded_code_object_t lco;
  OK(hsa_executable_load_agent_code_object(exe, ag.gpu, reader, NULL, &lco));
  OK(hsa_executable_freeze(exe, NULL));
  EXPECT_STATUS(hsa_executable_load_agent_code_object(exe, ag.gpu, reader, NULL, NULL),
                HSA_STATUS_ERROR_FROZEN_EXECUTABLE);

  counts_t c = {0, 0};
  OK(hsa_executable_iterate_symbols(exe, count_cb, &c));
  CHECK(c.kernels == 1 && c.variables >= 1, "symbols: %d kernels, %d variables", c.kernels,
        c.variables);

  hsa_executable_symbol_t ksym, vsym;
  EXPECT_STATUS(hsa_executable_get_symbol_by_name(exe, "nope.kd", &ag.gpu, &ksym),
                HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  OK(hsa_executable_get_symbol_by_name(exe, "scale.kd", &ag.gpu, &ksym));
  OK(hsa_executable_get_symbol_by_name(exe, "bias", &ag.gpu, &vsym));
  uint64_t kernel_object = 0, bias_addr = 0;
  uint32_t kernarg_size = 0, kernarg_align = 0, group = 99, priv = 99, name_len = 0;
  bool dyn = true;
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &kernarg_align));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK, &dyn));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &name_len));
  char name[64] = {0};
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
  CHECK(name_len == 8 && strncmp(name, "scale.kd", 8) == 0, "kernel name '%s' (%u)", name, name_len);
  CHECK(kernel_object % 64 == 0 && kernel_object != 0, "kernel object 0x%lx", (unsigned long)kernel_object);
  CHECK(kernarg_size >= 24 && kernarg_align >= 8, "kernarg %u align %u", kernarg_size, kernarg_align);
  CHECK(group == 0 && priv == 0 && !dyn, "segments: group %u private %u dynamic stack %d", group, priv, dyn);
  OK(hsa_executable_symbol_get_info(vsym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &bias_addr));
  CHECK(*(int *)bias_addr == 5, "device global initial value %d", *(int *)bias_addr);
  *(int *)bias_addr = 7; /* host and device share memory in the simulator, as on an APU */

  /* Buffers: device memory in and out (filled and read back with hsa_memory_copy: the CPU
   * may not touch device memory unless the GPU has a large BAR), kernarg from the kernarg
   * pool. */
  enum { N = 1000, BLOCK = 64 };
  hsa_amd_memory_pool_t dev_pool = find_pool(ag.gpu, 0, 1);
  hsa_amd_memory_pool_t karg_pool = find_pool(ag.cpu, 1, 0);
  int *in = NULL, *out = NULL;
  OK(hsa_amd_memory_pool_allocate(dev_pool, N * sizeof(int), 0, (void **)&in));
  OK(hsa_amd_memory_pool_allocate(dev_pool, N * sizeof(int), 0, (void **)&out));
  hsa_agent_t both[2] = {ag.cpu, ag.gpu};
  OK(hsa_amd_agents_allow_access(2, both, NULL, in));
  OK(hsa_amd_agents_allow_access(2, both, NULL, out));
  static int host_in[N], host_out[N];
  for (int i = 0; i < N; i++) host_in[i] = i - 300, host_out[i] = -1;
  OK(hsa_memory_copy(in, host_in, sizeof host_in));
  OK(hsa_memory_copy(out, host_out, sizeof host_out));
  uint8_t *kernarg = NULL;
  OK(hsa_amd_memory_pool_allocate(karg_pool, kernarg_size, 0, (void **)&kernarg));
  memset(kernarg, 0, kernarg_size);
  struct { int *out; const int *in; int n, factor, block; } args = {out, in, N, 3, BLOCK};
  memcpy(kernarg, &args, sizeof args);

  hsa_queue_t *q = make_queue(ag.gpu, 64, NULL, NULL);
  hsa_signal_t done = make_signal(1);
  hsa_kernel_dispatch_packet_t d;
  memset(&d, 0, sizeof d);
  d.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  d.workgroup_size_x = BLOCK;
  d.workgroup_size_y = d.workgroup_size_z = 1;
  d.grid_size_x = (N + BLOCK - 1) / BLOCK * BLOCK;
  d.grid_size_y = d.grid_size_z = 1;
  d.kernel_object = kernel_object;
  d.kernarg_address = kernarg;
  d.group_segment_size = group;
  d.private_segment_size = priv;
  d.completion_signal = done;
  d.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  publish(q, &d);
  CHECK(wait_eq(done, 0, 60 * SECOND_NS) == 0, "kernel did not complete");
  OK(hsa_memory_copy(host_out, out, sizeof host_out));
  for (int i = 0; i < N; i++)
    CHECK(host_out[i] == (i - 300) * 3 + 7, "out[%d] = %d, expected %d", i, host_out[i],
          (i - 300) * 3 + 7);
  hsa_amd_profiling_dispatch_time_t t;
  OK(hsa_amd_profiling_get_dispatch_time(ag.gpu, done, &t));
  CHECK(t.end >= t.start && t.start != 0, "dispatch time");

  /* The same code object from memory into a second executable; a garbage object fails. */
  FILE *f = fopen(argv[1], "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *bytes = malloc(size);
  CHECK(fread(bytes, 1, size, f) == (size_t)size, "read");
  fclose(f);
  hsa_code_object_reader_t mem_reader, junk_reader;
  OK(hsa_code_object_reader_create_from_memory(bytes, size, &mem_reader));
  free(bytes);
  hsa_executable_t exe2;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe2));
  OK(hsa_executable_load_agent_code_object(exe2, ag.gpu, mem_reader, NULL, NULL));
  OK(hsa_executable_freeze(exe2, NULL));
  hsa_executable_symbol_t ksym2;
  OK(hsa_executable_get_symbol_by_name(exe2, "scale.kd", &ag.gpu, &ksym2));
  char junk[256];
  memset(junk, 0x5a, sizeof junk);
  OK(hsa_code_object_reader_create_from_memory(junk, sizeof junk, &junk_reader));
  hsa_executable_t exe3;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe3));
  EXPECT_STATUS(hsa_executable_load_agent_code_object(exe3, ag.gpu, junk_reader, NULL, NULL),
                HSA_STATUS_ERROR_INVALID_CODE_OBJECT);

  OK(hsa_executable_destroy(exe3));
  OK(hsa_executable_destroy(exe2));
  OK(hsa_executable_destroy(exe));
  EXPECT_STATUS(hsa_executable_destroy(exe), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  OK(hsa_code_object_reader_destroy(reader));
  OK(hsa_code_object_reader_destroy(mem_reader));
  OK(hsa_code_object_reader_destroy(junk_reader));
  OK(hsa_queue_destroy(q));
  OK(hsa_amd_memory_pool_free(in));
  OK(hsa_amd_memory_pool_free(out));
  OK(hsa_amd_memory_pool_free(kernarg));
  OK(hsa_shut_down());
  printf("executable_dispatch: ok\n");
  return 0;
}
