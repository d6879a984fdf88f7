/* The AMD loader extension (HSA_EXTENSION_AMD_LOADER v1.3, <hsa/hsa_ven_amd_loader.h>):
 * the table AMD's HIP runtime asks for, answering address -> executable/host address
 * queries and describing loaded code objects. argv[1] is a clang-19 code object. */
#include <fcntl.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <unistd.h>
#include "hsasim_test.h"

static hsa_status_t count_lco(hsa_executable_t e, hsa_loaded_code_object_t lco, void *data) {
  (void)e;
  *(hsa_loaded_code_object_t *)data = lco;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_exe(hsa_executable_t e, void *data) {
  hsa_executable_t *want = (hsa_executable_t *)data;
  return e.handle == want->handle ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: loader_extension CODE_OBJECT");
  agents_t ag = init_hsasim();
  bool supported = false;
  uint16_t minor = 0;
  OK(hsa_system_major_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, &minor, &supported));
  CHECK(supported && minor >= 3, "loader v1.%u supported=%d", minor, supported);
  hsa_ven_amd_loader_1_03_pfn_t t;
  memset(&t, 0, sizeof t);
  OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof t, &t));
  CHECK(t.hsa_ven_amd_loader_iterate_executables != NULL, "full 1.03 table");
  hsa_ven_amd_loader_1_00_pfn_t old;
  OK(hsa_system_get_extension_table(HSA_EXTENSION_AMD_LOADER, 1, 0, &old));
  CHECK(old.hsa_ven_amd_loader_query_host_address == t.hsa_ven_amd_loader_query_host_address,
        "1.00 table is a prefix");
  char images_table[64];
  EXPECT_STATUS(hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, sizeof images_table,
                                                     images_table),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);

  int fd = open(argv[1], O_RDONLY);
  CHECK(fd >= 0, "open %s", argv[1]);
  off_t size = lseek(fd, 0, SEEK_END);
  hsa_code_object_reader_t reader;
  OK(t.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(fd, 0, (size_t)size,
                                                                               &reader));
  close(fd);
  hsa_executable_t exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  OK(hsa_executable_load_agent_code_object(exe, ag.gpu, reader, NULL, NULL));
  OK(hsa_executable_freeze(exe, NULL));
  hsa_executable_symbol_t ksym;
  OK(hsa_executable_get_symbol_by_name(exe, "scale.kd", &ag.gpu, &ksym));
  uint64_t kobj = 0;
  OK(hsa_executable_symbol_get_info(ksym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));

  const void *host = NULL;
  OK(t.hsa_ven_amd_loader_query_host_address((const void *)kobj, &host));
  CHECK(host == (const void *)kobj, "host address of a loaded kernel descriptor");
  int local = 0;
  EXPECT_STATUS(t.hsa_ven_amd_loader_query_host_address(&local, &host),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_executable_t found = {0};
  OK(t.hsa_ven_amd_loader_query_executable((const void *)kobj, &found));
  CHECK(found.handle == exe.handle, "executable of an address");

  hsa_loaded_code_object_t lco = {0};
  OK(t.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(exe, count_lco, &lco));
  CHECK(lco.handle != 0, "one loaded code object");
  uint64_t base = 0, load_size = 0, mem_size = 0;
  hsa_agent_t agent = {0};
  uint32_t uri_len = 0;
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE, &base));
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE, &load_size));
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &agent));
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE, &mem_size));
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH, &uri_len));
  char uri[256] = {0};
  CHECK(uri_len < sizeof uri, "uri length %u", uri_len);
  OK(t.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, uri));
  CHECK(kobj >= base && kobj < base + load_size, "kernel inside the load range");
  CHECK(agent.handle == ag.gpu.handle && mem_size == (uint64_t)size, "agent / storage size");
  CHECK(strncmp(uri, "memory://", 9) == 0, "uri %s", uri);

  size_t nseg = 0;
  OK(t.hsa_ven_amd_loader_query_segment_descriptors(NULL, &nseg));
  CHECK(nseg == 1, "segments: %zu", nseg);
  hsa_ven_amd_loader_segment_descriptor_t seg;
  OK(t.hsa_ven_amd_loader_query_segment_descriptors(&seg, &nseg));
  CHECK(seg.executable.handle == exe.handle && (uint64_t)seg.segment_base == base, "segment");
  hsa_status_t st = t.hsa_ven_amd_loader_iterate_executables(find_exe, &exe);
  CHECK(st == HSA_STATUS_INFO_BREAK, "iterate_executables found ours: 0x%x", st);

  OK(hsa_executable_destroy(exe));
  EXPECT_STATUS(t.hsa_ven_amd_loader_query_executable((const void *)kobj, &found),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);
  OK(hsa_code_object_reader_destroy(reader));
  OK(hsa_shut_down());
  printf("loader_extension: ok\n");
  return 0;
}
