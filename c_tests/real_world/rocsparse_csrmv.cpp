// rocSPARSE CSR SpMV on hipshim: y = alpha * A * x + beta * y with Debian's
// librocsparse0 (AMD-built gfx90a code), checked against a CPU SpMV.
//
// A is a random m x n CSR matrix with ragged rows (empty rows, short rows,
// and a few long rows, so both the scalar/vector and the adaptive kernels
// take their different paths). Four runs per precision:
//   1. rocsparse_?csrmv without analysis (info = nullptr: the general kernel),
//      and its transposed form (a scatter with atomic adds),
//   2. rocsparse_?csrmv_analysis + rocsparse_?csrmv (the adaptive kernel),
//   3. the same analysed call again, on a stream the program created.
// Each result must match the CPU within a relative tolerance scaled by the
// row's absolute sum (the order of the additions differs; the float tolerance allows for
// float accumulation, the double one for a few roundings).
//
// Prints "rocsparse_csrmv: PASSED" and exits 0, or says what differed.

#include "checks.h"

#include <hip/hip_runtime.h>
#include <rocsparse/rocsparse.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define SPARSE_CHECK(call) STATUS_CHECK(call, rocsparse_status_success, "rocsparse_status")

// A small deterministic generator for the matrix (not what is under test).
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
// Uniform in [-1, 1) with all 53 bits of a double.
static double next_unit() {
    uint64_t bits = ((uint64_t)next_u32() << 21) ^ next_u32();
    return (bits & ((1ull << 53) - 1)) / 9007199254740992.0 * 2.0 - 1.0;
}

struct Csr {
    int m, n;
    std::vector<int> row_ptr, col_ind;
    std::vector<double> val;
};

// Row lengths: ~10% empty, most 1..24, ~1% long (200..1200) rows.
static Csr random_csr(int m, int n) {
    Csr a;
    a.m = m;
    a.n = n;
    a.row_ptr.push_back(0);
    for (int r = 0; r < m; ++r) {
        uint32_t kind = next_u32() % 100;
        int len;
        if (kind < 10)
            len = 0;
        else if (kind < 99)
            len = 1 + next_u32() % 24;
        else
            len = 200 + next_u32() % 1000;
        if (len > n) len = n;
        // Sorted distinct columns: choose a random start and random gaps.
        int col = next_u32() % (n / 4 + 1);
        int placed = 0;
        for (; placed < len && col < n; ++placed) {
            a.col_ind.push_back(col);
            a.val.push_back(next_unit());
            int room = (n - col) / (len - placed);
            col += 1 + (room > 1 ? next_u32() % room : 0);
        }
        a.row_ptr.push_back((int)a.col_ind.size());
    }
    return a;
}

template <typename T>
struct Ops;
template <>
struct Ops<float> {
    static constexpr const char* name = "scsrmv";
    static constexpr double tol = 1e-5;
    static rocsparse_status analysis(rocsparse_handle h, int m, int n, int nnz,
                                     rocsparse_mat_descr d, const float* v, const int* rp,
                                     const int* ci, rocsparse_mat_info info) {
        return rocsparse_scsrmv_analysis(h, rocsparse_operation_none, m, n, nnz, d, v, rp, ci,
                                         info);
    }
    static rocsparse_status mv(rocsparse_handle h, int m, int n, int nnz, const float* alpha,
                               rocsparse_mat_descr d, const float* v, const int* rp,
                               const int* ci, rocsparse_mat_info info, const float* x,
                               const float* beta, float* y,
                               rocsparse_operation op = rocsparse_operation_none) {
        return rocsparse_scsrmv(h, op, m, n, nnz, alpha, d, v, rp, ci, info, x, beta, y);
    }
};
template <>
struct Ops<double> {
    static constexpr const char* name = "dcsrmv";
    static constexpr double tol = 1e-13;
    static rocsparse_status analysis(rocsparse_handle h, int m, int n, int nnz,
                                     rocsparse_mat_descr d, const double* v, const int* rp,
                                     const int* ci, rocsparse_mat_info info) {
        return rocsparse_dcsrmv_analysis(h, rocsparse_operation_none, m, n, nnz, d, v, rp, ci,
                                         info);
    }
    static rocsparse_status mv(rocsparse_handle h, int m, int n, int nnz, const double* alpha,
                               rocsparse_mat_descr d, const double* v, const int* rp,
                               const int* ci, rocsparse_mat_info info, const double* x,
                               const double* beta, double* y,
                               rocsparse_operation op = rocsparse_operation_none) {
        return rocsparse_dcsrmv(h, op, m, n, nnz, alpha, d, v, rp, ci, info, x, beta, y);
    }
};

static int failures = 0;

// Compares y_gpu with alpha*A*x + beta*y0 computed in double on the CPU.
template <typename T>
static void check(const char* what, const Csr& a, const std::vector<T>& val,
                  const std::vector<T>& x, const std::vector<T>& y0, T alpha, T beta,
                  const std::vector<T>& y_gpu) {
    int bad = 0;
    double worst = 0;
    for (int r = 0; r < a.m; ++r) {
        double sum = 0, mag = 0;
        for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
            double p = double(val[k]) * double(x[a.col_ind[k]]);
            sum += p;
            mag += std::fabs(p);
        }
        double want = double(alpha) * sum + double(beta) * double(y0[r]);
        double scale = std::fabs(double(alpha)) * mag + std::fabs(double(beta) * double(y0[r]));
        double err = std::fabs(double(y_gpu[r]) - want) / (scale > 1e-30 ? scale : 1.0);
        if (err > worst) worst = err;
        if (!(err <= Ops<T>::tol)) {
            if (bad < 8)
                std::fprintf(stderr,
                             "%s %s: row %d (%d nonzeros): got %.17g, want %.17g "
                             "(relative error %.3g > %.3g)\n",
                             Ops<T>::name, what, r, a.row_ptr[r + 1] - a.row_ptr[r],
                             double(y_gpu[r]), want, err, Ops<T>::tol);
            ++bad;
        }
    }
    if (bad) {
        std::fprintf(stderr, "%s %s: %d of %d rows differ\n", Ops<T>::name, what, bad, a.m);
        ++failures;
    } else {
        std::printf("%s %s: %d rows match (worst relative error %.3g)\n", Ops<T>::name, what,
                    a.m, worst);
    }
}

// Compares y_gpu (length n) with alpha*A^T*x + beta*y0 computed in double.
template <typename T>
static void check_transposed(const Csr& a, const std::vector<T>& val, const std::vector<T>& x,
                             const std::vector<T>& y0, T alpha, T beta,
                             const std::vector<T>& y_gpu) {
    std::vector<double> sum(a.n, 0.0), mag(a.n, 0.0);
    for (int r = 0; r < a.m; ++r)
        for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
            double p = double(val[k]) * double(x[r]);
            sum[a.col_ind[k]] += p;
            mag[a.col_ind[k]] += std::fabs(p);
        }
    int bad = 0;
    double worst = 0;
    for (int c = 0; c < a.n; ++c) {
        double want = double(alpha) * sum[c] + double(beta) * double(y0[c]);
        double scale = std::fabs(double(alpha)) * mag[c] + std::fabs(double(beta) * double(y0[c]));
        double err = std::fabs(double(y_gpu[c]) - want) / (scale > 1e-30 ? scale : 1.0);
        if (err > worst) worst = err;
        if (!(err <= Ops<T>::tol)) {
            if (bad < 8)
                std::fprintf(stderr, "%s transposed: entry %d: got %.17g, want %.17g\n",
                             Ops<T>::name, c, double(y_gpu[c]), want);
            ++bad;
        }
    }
    if (bad) {
        std::fprintf(stderr, "%s transposed: %d of %d entries differ\n", Ops<T>::name, bad, a.n);
        ++failures;
    } else {
        std::printf("%s transposed: %d entries match (worst relative error %.3g)\n",
                    Ops<T>::name, a.n, worst);
    }
}

template <typename T>
static void run(rocsparse_handle handle, const Csr& a, hipStream_t stream) {
    const int m = a.m, n = a.n, nnz = (int)a.val.size();
    std::vector<T> val(nnz), x(n), y0(m);
    for (int k = 0; k < nnz; ++k) val[k] = T(a.val[k]);
    for (int i = 0; i < n; ++i) x[i] = T(next_unit());
    for (int i = 0; i < m; ++i) y0[i] = T(next_unit());
    const T alpha = T(1.75), beta = T(-0.5);

    int *d_rp, *d_ci;
    T *d_val, *d_x, *d_y;
    HIP_CHECK(hipMalloc(&d_rp, sizeof(int) * (m + 1)));
    HIP_CHECK(hipMalloc(&d_ci, sizeof(int) * nnz));
    HIP_CHECK(hipMalloc(&d_val, sizeof(T) * nnz));
    HIP_CHECK(hipMalloc(&d_x, sizeof(T) * n));
    HIP_CHECK(hipMalloc(&d_y, sizeof(T) * m));
    HIP_CHECK(hipMemcpy(d_rp, a.row_ptr.data(), sizeof(int) * (m + 1), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_ci, a.col_ind.data(), sizeof(int) * nnz, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_val, val.data(), sizeof(T) * nnz, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_x, x.data(), sizeof(T) * n, hipMemcpyHostToDevice));

    rocsparse_mat_descr descr;
    SPARSE_CHECK(rocsparse_create_mat_descr(&descr));
    std::vector<T> y(m);

    // 1. No analysis: the general CSR kernel.
    HIP_CHECK(hipMemcpy(d_y, y0.data(), sizeof(T) * m, hipMemcpyHostToDevice));
    SPARSE_CHECK(Ops<T>::mv(handle, m, n, nnz, &alpha, descr, d_val, d_rp, d_ci, nullptr, d_x,
                            &beta, d_y));
    HIP_CHECK(hipMemcpy(y.data(), d_y, sizeof(T) * m, hipMemcpyDeviceToHost));
    check<T>("without analysis", a, val, x, y0, alpha, beta, y);

    // 1b. Transposed, no analysis: y (n) = alpha * A^T * x (m) + beta * y
    //     (scale kernel, then a scatter with atomic adds).
    {
        std::vector<T> xt(m), yt0(n), yt(n);
        for (int i = 0; i < m; ++i) xt[i] = T(next_unit());
        for (int i = 0; i < n; ++i) yt0[i] = T(next_unit());
        T *d_xt, *d_yt;
        HIP_CHECK(hipMalloc(&d_xt, sizeof(T) * m));
        HIP_CHECK(hipMalloc(&d_yt, sizeof(T) * n));
        HIP_CHECK(hipMemcpy(d_xt, xt.data(), sizeof(T) * m, hipMemcpyHostToDevice));
        HIP_CHECK(hipMemcpy(d_yt, yt0.data(), sizeof(T) * n, hipMemcpyHostToDevice));
        SPARSE_CHECK(Ops<T>::mv(handle, m, n, nnz, &alpha, descr, d_val, d_rp, d_ci, nullptr,
                                d_xt, &beta, d_yt, rocsparse_operation_transpose));
        HIP_CHECK(hipMemcpy(yt.data(), d_yt, sizeof(T) * n, hipMemcpyDeviceToHost));
        check_transposed<T>(a, val, xt, yt0, alpha, beta, yt);
        HIP_CHECK(hipFree(d_xt));
        HIP_CHECK(hipFree(d_yt));
    }

    // 2. With analysis: the adaptive kernel (row blocks computed on the device).
    rocsparse_mat_info info;
    SPARSE_CHECK(rocsparse_create_mat_info(&info));
    SPARSE_CHECK(Ops<T>::analysis(handle, m, n, nnz, descr, d_val, d_rp, d_ci, info));
    HIP_CHECK(hipMemcpy(d_y, y0.data(), sizeof(T) * m, hipMemcpyHostToDevice));
    SPARSE_CHECK(Ops<T>::mv(handle, m, n, nnz, &alpha, descr, d_val, d_rp, d_ci, info, d_x,
                            &beta, d_y));
    HIP_CHECK(hipMemcpy(y.data(), d_y, sizeof(T) * m, hipMemcpyDeviceToHost));
    check<T>("with analysis", a, val, x, y0, alpha, beta, y);

    // 3. The analysed call again on a created stream, alpha/beta on the device.
    SPARSE_CHECK(rocsparse_set_stream(handle, stream));
    T* d_ab;
    T ab[2] = {alpha, beta};
    HIP_CHECK(hipMalloc(&d_ab, sizeof(ab)));
    HIP_CHECK(hipMemcpy(d_ab, ab, sizeof(ab), hipMemcpyHostToDevice));
    SPARSE_CHECK(rocsparse_set_pointer_mode(handle, rocsparse_pointer_mode_device));
    HIP_CHECK(hipMemcpyAsync(d_y, y0.data(), sizeof(T) * m, hipMemcpyHostToDevice, stream));
    SPARSE_CHECK(Ops<T>::mv(handle, m, n, nnz, d_ab, descr, d_val, d_rp, d_ci, info, d_x,
                            d_ab + 1, d_y));
    HIP_CHECK(hipMemcpyAsync(y.data(), d_y, sizeof(T) * m, hipMemcpyDeviceToHost, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    check<T>("on a stream, device scalars", a, val, x, y0, alpha, beta, y);
    SPARSE_CHECK(rocsparse_set_pointer_mode(handle, rocsparse_pointer_mode_host));
    SPARSE_CHECK(rocsparse_set_stream(handle, nullptr));

    SPARSE_CHECK(rocsparse_destroy_mat_info(info));
    SPARSE_CHECK(rocsparse_destroy_mat_descr(descr));
    HIP_CHECK(hipFree(d_ab));
    HIP_CHECK(hipFree(d_rp));
    HIP_CHECK(hipFree(d_ci));
    HIP_CHECK(hipFree(d_val));
    HIP_CHECK(hipFree(d_x));
    HIP_CHECK(hipFree(d_y));
}

int main(int argc, char** argv) {
    int m = argc > 1 ? std::atoi(argv[1]) : 5000;
    int n = argc > 2 ? std::atoi(argv[2]) : 4000;
    Csr a = random_csr(m, n);
    int empty = 0, longest = 0;
    for (int r = 0; r < m; ++r) {
        int len = a.row_ptr[r + 1] - a.row_ptr[r];
        empty += len == 0;
        if (len > longest) longest = len;
    }
    std::printf("matrix: %d x %d, %zu nonzeros, %d empty rows, longest row %d\n", m, n,
                a.val.size(), empty, longest);

    rocsparse_handle handle;
    SPARSE_CHECK(rocsparse_create_handle(&handle));
    hipStream_t stream;
    HIP_CHECK(hipStreamCreate(&stream));

    run<float>(handle, a, stream);
    run<double>(handle, a, stream);

    HIP_CHECK(hipStreamDestroy(stream));
    SPARSE_CHECK(rocsparse_destroy_handle(handle));
    if (failures) {
        std::fprintf(stderr, "rocsparse_csrmv: FAILED (%d checks)\n", failures);
        return 1;
    }
    std::printf("rocsparse_csrmv: PASSED\n");
    return 0;
}
