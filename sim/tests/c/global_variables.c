/* Device global variables: an external variable the host defines with
 * hsa_executable_agent_global_variable_define (resolved through the code object's
 * R_AMDGPU_ABS64 relocation), a pointer initialised to another global (R_AMDGPU_RELATIVE64),
 * and the error cases: loading with the variable undefined, defining it twice or after
 * freezing. argv[1] is globals.co. */
#include <fcntl.h>
#include <unistd.h>
#include "hsasim_test.h"

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: global_variables CODE_OBJECT");
  agents_t ag = init_hsasim();
  int fd = open(argv[1], O_RDONLY);
  CHECK(fd >= 0, "open %s", argv[1]);
  hsa_code_object_reader_t reader;
  OK(hsa_code_object_reader_create_from_file(fd, &reader));
  close(fd);

  hsa_executable_t missing;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &missing));
  EXPECT_STATUS(hsa_executable_load_agent_code_object(missing, ag.gpu, reader, NULL, NULL),
                HSA_STATUS_ERROR_VARIABLE_UNDEFINED);
  OK(hsa_executable_destroy(missing));

  hsa_amd_memory_pool_t dev_pool = find_pool(ag.gpu, 0, 1);
  int *bias = NULL, *out = NULL;
  OK(hsa_amd_memory_pool_allocate(dev_pool, sizeof(int), 0, (void **)&bias));
  OK(hsa_amd_memory_pool_allocate(dev_pool, 64 * sizeof(int), 0, (void **)&out));
  int bias_value = 1000; /* device memory: written as a client without a large BAR must */
  OK(hsa_memory_copy(bias, &bias_value, sizeof bias_value));
  hsa_executable_t exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  OK(hsa_executable_agent_global_variable_define(exe, ag.gpu, "ext_bias", bias));
  EXPECT_STATUS(hsa_executable_agent_global_variable_define(exe, ag.gpu, "ext_bias", bias),
                HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  OK(hsa_executable_load_agent_code_object(exe, ag.gpu, reader, NULL, NULL));
  OK(hsa_executable_freeze(exe, NULL));
  EXPECT_STATUS(hsa_executable_agent_global_variable_define(exe, ag.gpu, "late", bias),
                HSA_STATUS_ERROR_FROZEN_EXECUTABLE);

  /* The relocated pointer holds the loaded address of local_table. */
  hsa_executable_symbol_t tsym, psym, ksym;
  OK(hsa_executable_get_symbol_by_name(exe, "local_table", &ag.gpu, &tsym));
  OK(hsa_executable_get_symbol_by_name(exe, "table_ptr", &ag.gpu, &psym));
  uint64_t table_addr = 0, ptr_addr = 0;
  uint32_t table_size = 0;
  OK(hsa_executable_symbol_get_info(tsym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &table_addr));
  OK(hsa_executable_symbol_get_info(tsym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, &table_size));
  OK(hsa_executable_symbol_get_info(psym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &ptr_addr));
  CHECK(table_size == 16, "local_table size %u", table_size);
  CHECK(*(uint64_t *)ptr_addr == table_addr, "table_ptr = %#lx, local_table at %#lx",
        (unsigned long)*(uint64_t *)ptr_addr, (unsigned long)table_addr);

  OK(hsa_executable_get_symbol_by_name(exe, "use_ext.kd", &ag.gpu, &ksym));
  uint64_t kobj = 0;
  uint32_t kernarg_size = 0;
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
  void *kernarg = NULL;
  OK(hsa_amd_memory_pool_allocate(find_pool(ag.cpu, 1, 0), kernarg_size, 0, &kernarg));
  memset(kernarg, 0, kernarg_size);
  memcpy(kernarg, &out, sizeof out);

  hsa_queue_t *q = make_queue(ag.gpu, 64, NULL, NULL);
  hsa_signal_t done = make_signal(1);
  hsa_kernel_dispatch_packet_t d;
  memset(&d, 0, sizeof d);
  d.setup = 1;
  d.workgroup_size_x = 64;
  d.workgroup_size_y = d.workgroup_size_z = 1;
  d.grid_size_x = 64;
  d.grid_size_y = d.grid_size_z = 1;
  d.kernel_object = kobj;
  d.kernarg_address = kernarg;
  d.completion_signal = done;
  d.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  publish(q, &d);
  CHECK(wait_eq(done, 0, 60 * SECOND_NS) == 0, "kernel did not complete");
  int host_out[64];
  OK(hsa_memory_copy(host_out, out, sizeof host_out));
  for (int i = 0; i < 64; i++)
    CHECK(host_out[i] == 1000 + 10 * ((i & 3) + 1), "out[%d] = %d", i, host_out[i]);

  OK(hsa_queue_destroy(q));
  OK(hsa_executable_destroy(exe));
  OK(hsa_code_object_reader_destroy(reader));
  OK(hsa_shut_down());
  printf("global_variables: ok\n");
  return 0;
}
