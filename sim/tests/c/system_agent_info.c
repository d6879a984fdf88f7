/* System and agent information as ROCr reports it, the region view of the memory pools,
 * caches, ISA/wavefront queries, signal groups, queue priorities/CU masks and the per-agent
 * queue limit (run with HSASIM_MAX_QUEUES=4, HSASIM_GPUS=2, HSASIM_CUS=40). */
#include "hsasim_test.h"

static hsa_status_t count_cb(hsa_region_t r, void *data) {
  (void)r;
  (*(int *)data)++;
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  int n;
  uint32_t sizes[4];
  uint8_t levels[4];
} caches_t;

static hsa_status_t cache_cb(hsa_cache_t c, void *data) {
  caches_t *cs = (caches_t *)data;
  OK(hsa_cache_get_info(c, HSA_CACHE_INFO_SIZE, &cs->sizes[cs->n]));
  OK(hsa_cache_get_info(c, HSA_CACHE_INFO_LEVEL, &cs->levels[cs->n]));
  cs->n++;
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  hsa_region_t kernarg, coarse, group;
} regions_t;

static hsa_status_t region_cb(hsa_region_t r, void *data) {
  regions_t *rs = (regions_t *)data;
  hsa_region_segment_t seg;
  uint32_t flags = 0;
  OK(hsa_region_get_info(r, HSA_REGION_INFO_SEGMENT, &seg));
  if (seg == HSA_REGION_SEGMENT_GROUP) rs->group = r;
  if (seg != HSA_REGION_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  OK(hsa_region_get_info(r, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
  if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) rs->kernarg = r;
  if (flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED) rs->coarse = r;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t wave_cb(hsa_wavefront_t w, void *data) {
  OK(hsa_wavefront_get_info(w, HSA_WAVEFRONT_INFO_SIZE, data));
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t isa_cb(hsa_isa_t isa, void *data) {
  *(hsa_isa_t *)data = isa;
  return HSA_STATUS_SUCCESS;
}

int main(void) {
  agents_t ag = init_hsasim();
  CHECK(ag.gpus == 2, "HSASIM_GPUS=2 gives %d GPU agents", ag.gpus);

  /* System. */
  uint16_t major = 0;
  uint64_t freq = 0, t0 = 0, t1 = 0, max_wait = 0;
  hsa_endianness_t endian;
  hsa_machine_model_t model;
  uint8_t ext[128];
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT, &max_wait));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_ENDIANNESS, &endian));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_MACHINE_MODEL, &model));
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_EXTENSIONS, ext));
  CHECK(major == 1 && freq > 0 && t1 >= t0 && endian == HSA_ENDIANNESS_LITTLE &&
            model == HSA_MACHINE_MODEL_LARGE,
        "system info");
  CHECK(ext[HSA_EXTENSION_AMD_LOADER / 8] & (1 << (HSA_EXTENSION_AMD_LOADER % 8)),
        "AMD loader extension bit");
  bool supported = false;
  OK(hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, 0, &supported));
  CHECK(supported, "AMD loader 1.0 supported");
  OK(hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &supported));
  CHECK(!supported, "images are not modelled");

  /* GPU agent. */
  char name[64] = {0}, vendor[64] = {0}, product[64] = {0}, uuid[24] = {0};
  uint32_t wave = 0, cus = 0, simds = 0, waves_per_cu = 0, qmax = 0, qmin = 0, qmaxsize = 0,
           node = 0, chip = 0, wg_max = 0, caches[4] = {0};
  uint16_t wg_dim[3] = {0};
  hsa_device_type_t dev;
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_NAME, name));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_VENDOR_NAME, vendor));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_UUID, uuid));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_DEVICE, &dev));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU, &simds));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU, &waves_per_cu));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_QUEUES_MAX, &qmax));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &qmin));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &qmaxsize));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_NODE, &node));
  OK(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_CHIP_ID, &chip));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg_max));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_WORKGROUP_MAX_DIM, wg_dim));
  OK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_CACHE_SIZE, caches));
  CHECK(strcmp(name, "gfx942") == 0 && strcmp(vendor, "AMD") == 0, "name %s vendor %s", name, vendor);
  CHECK(strncmp(product, "hsasim", 6) == 0, "product %s", product);
  CHECK(strncmp(uuid, "GPU-", 4) == 0, "uuid %s", uuid);
  CHECK(dev == HSA_DEVICE_TYPE_GPU && wave == 64 && cus == 40 && simds == 4 && waves_per_cu > 0,
        "wave %u cus %u simds %u", wave, cus, simds);
  CHECK(qmax == 4 && qmin == 64 && qmaxsize >= 4096, "queues max %u min %u max size %u", qmax, qmin, qmaxsize);
  CHECK(node == 1 && chip != 0 && wg_max == 1024 && wg_dim[0] == 1024, "node %u chip %#x", node, chip);
  EXPECT_STATUS(hsa_agent_get_info(ag.gpu, (hsa_agent_info_t)0x7777, name),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* ISA and wavefronts. */
  hsa_isa_t isa = {0};
  OK(hsa_agent_iterate_isas(ag.gpu, isa_cb, &isa));
  uint32_t wsize = 0;
  OK(hsa_isa_iterate_wavefronts(isa, wave_cb, &wsize));
  CHECK(wsize == 64, "wavefront size %u", wsize);
  uint16_t policies = 0;
  OK(hsa_agent_get_exception_policies(ag.gpu, HSA_PROFILE_BASE, &policies));

  /* Caches: the same sizes HSA_AGENT_INFO_CACHE_SIZE reports. */
  caches_t cs = {0};
  OK(hsa_agent_iterate_caches(ag.gpu, cache_cb, &cs));
  CHECK(cs.n >= 2 && cs.levels[0] == 1 && cs.sizes[0] == caches[0] && cs.sizes[1] == caches[1],
        "caches: %d, L1 %u", cs.n, cs.sizes[0]);

  /* Regions mirror pools; allocation through a region is a pool allocation. */
  int n = 0;
  OK(hsa_agent_iterate_regions(ag.gpu, count_cb, &n));
  CHECK(n == 2, "GPU regions: %d (global + group)", n);
  regions_t rs = {{0}, {0}, {0}};
  OK(hsa_agent_iterate_regions(ag.cpu, region_cb, &rs));
  OK(hsa_agent_iterate_regions(ag.gpu, region_cb, &rs));
  CHECK(rs.kernarg.handle && rs.coarse.handle && rs.group.handle, "regions found");
  size_t lds = 0;
  OK(hsa_region_get_info(rs.group, HSA_REGION_INFO_SIZE, &lds));
  CHECK(lds == 65536, "LDS %zu", lds);
  void *p = NULL;
  OK(hsa_memory_allocate(rs.kernarg, 100, &p));
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(hsa_amd_pointer_info(p, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA && info.sizeInBytes == 100, "pointer info");
  OK(hsa_memory_assign_agent(p, ag.gpu, HSA_ACCESS_PERMISSION_RW));
  OK(hsa_memory_free(p));
  EXPECT_STATUS(hsa_memory_free(p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(hsa_memory_allocate(rs.group, 100, &p), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  /* Over-allocation of a device pool fails with OUT_OF_RESOURCES. */
  EXPECT_STATUS(hsa_memory_allocate(rs.coarse, (size_t)1 << 50, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);

  /* SVM attributes: plain host memory becomes device-accessible only when a GPU is given
   * access (the model is xnack-), and the attributes read back. */
  {
    enum { SVM_BYTES = 3 * 4096 };
    uint8_t *host = aligned_alloc(4096, SVM_BYTES);
    hsa_amd_svm_attribute_pair_t q[2] = {{HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, ag.gpu.handle},
                                         {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 99}};
    OK(hsa_amd_svm_attributes_get(host, SVM_BYTES, q, 2));
    CHECK(q[0].attribute == HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, "default GPU access %#lx",
          (unsigned long)q[0].attribute);
    void *dev = NULL;
    OK(hsa_amd_memory_pool_allocate(find_pool(ag.gpu, 0, 1), SVM_BYTES, 0, &dev));
    hsa_signal_t copied = make_signal(1);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dev, ag.gpu, host, ag.cpu, SVM_BYTES, 0, NULL, copied),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_amd_svm_attribute_pair_t set[3] = {
        {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED},
        {HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE, ag.gpu.handle},
        {HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, ag.gpu.handle}};
    OK(hsa_amd_svm_attributes_set(host, SVM_BYTES, set, 3));
    hsa_amd_svm_attribute_pair_t bad = {HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, ag.gpu.handle};
    EXPECT_STATUS(hsa_amd_svm_attributes_set(host, SVM_BYTES, &bad, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
    hsa_amd_svm_attribute_pair_t back[3] = {{HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, ag.gpu.handle},
                                            {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 99},
                                            {HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0}};
    OK(hsa_amd_svm_attributes_get(host + 4096, 100, back, 3));
    CHECK(back[0].attribute == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE &&
              back[1].value == HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED &&
              back[2].value == ag.gpu.handle,
          "svm attributes read back");
    memset(host, 0x42, SVM_BYTES);
    OK(hsa_amd_memory_async_copy(dev, ag.gpu, host, ag.cpu, SVM_BYTES, 0, NULL, copied));
    CHECK(wait_eq(copied, 0, 10 * SECOND_NS) == 0, "copy from SVM memory");
    uint8_t last = 0; /* device memory: read back as a client without a large BAR must */
    OK(hsa_memory_copy(&last, (uint8_t *)dev + SVM_BYTES - 1, 1));
    CHECK(last == 0x42, "copied data");
    hsa_amd_svm_attribute_pair_t revoke = {HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, ag.gpu.handle};
    OK(hsa_amd_svm_attributes_set(host, SVM_BYTES, &revoke, 1));
    hsa_signal_store_relaxed(copied, 1);
    EXPECT_STATUS(hsa_amd_memory_async_copy(dev, ag.gpu, host, ag.cpu, SVM_BYTES, 0, NULL, copied),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT);
    OK(hsa_amd_memory_pool_free(dev));
    free(host);
  }

  /* Signal groups. */
  hsa_signal_t a = make_signal(1), b = make_signal(0);
  hsa_signal_t members[2] = {a, b};
  hsa_signal_group_t group;
  OK(hsa_signal_group_create(2, members, 0, NULL, &group));
  hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t vals[2] = {0, 0};
  hsa_signal_t which;
  hsa_signal_value_t v = 99;
  OK(hsa_signal_group_wait_any_scacquire(group, conds, vals, HSA_WAIT_STATE_BLOCKED, &which, &v));
  CHECK(which.handle == b.handle && v == 0, "group wait picked the satisfied member");
  OK(hsa_signal_group_destroy(group));
  EXPECT_STATUS(hsa_signal_group_destroy(group), HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);

  /* Queues: priorities and CU masks are recorded; the per-agent limit holds. */
  hsa_queue_t *qs[5];
  for (int i = 0; i < 4; i++) qs[i] = make_queue(ag.gpu, 64, NULL, NULL);
  EXPECT_STATUS(hsa_queue_create(ag.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                                 UINT32_MAX, &qs[4]),
                HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  OK(hsa_amd_queue_set_priority(qs[0], HSA_AMD_QUEUE_PRIORITY_HIGH));
  EXPECT_STATUS(hsa_amd_queue_set_priority(qs[0], (hsa_amd_queue_priority_t)7),
                HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t mask[2] = {0x0000ffff, 0}, got[2] = {0, 0};
  OK(hsa_amd_queue_cu_set_mask(qs[1], 64, mask));
  OK(hsa_amd_queue_cu_get_mask(qs[1], 64, got));
  CHECK(got[0] == 0x0000ffff && got[1] == 0, "cu mask %#x %#x", got[0], got[1]);
  OK(hsa_queue_destroy(qs[3]));
  OK(hsa_queue_create(ag.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &qs[3]));
  for (int i = 0; i < 4; i++) OK(hsa_queue_destroy(qs[i]));
  OK(hsa_shut_down());
  printf("system_agent_info: ok\n");
  return 0;
}
