// Device globals for the relocation test: `ext_bias` is defined by the host through
// hsa_executable_agent_global_variable_define (an R_AMDGPU_ABS64 against an undefined
// symbol); `table_ptr` is initialised to `local_table` (an R_AMDGPU_RELATIVE64).
extern __attribute__((device, visibility("default"))) int ext_bias;
__attribute__((device)) int local_table[4] = {10, 20, 30, 40};
__attribute__((device)) int *table_ptr = local_table;

extern "C" __attribute__((global)) void use_ext(int *out) {
  int i = (int)__builtin_amdgcn_workitem_id_x();
  out[i] = ext_bias + table_ptr[i & 3];
}
