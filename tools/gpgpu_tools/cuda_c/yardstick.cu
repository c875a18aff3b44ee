// The yardstick: lesson 03's textbook algorithms and lesson 01's copy in CUDA C, as in Mark
// Harris's transpose.cu (32 x 8 threads move a 32 x 32 tile, no bounds checks: the sides are
// multiples of TILE), timed with CUDA events beside cudaMemcpy device-to-device.
// Built and run by yardstick.py: nvcc -O3 -arch=native yardstick.cu -o yardstick
// Prints one JSON object: {"side": N, "repeat": R, "ms": {"name": [ms per launch, ...]}}.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

const int TILE = 32;  // a block moves a TILE x TILE tile ...
const int ROWS = 8;   // ... with TILE x ROWS threads
const int BLOCK = 256;  // lesson 01's copy: threads per block

__global__ void tile_copy(float *out, const float *a, int w) {
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * w + x] = a[(y + j) * w + x];
}

__global__ void transpose_naive(float *out, const float *a, int w) {
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[x * w + (y + j)] = a[(y + j) * w + x];
}

template <int PADDED>
__global__ void transpose_shared(float *out, const float *a, int w) {
  __shared__ float tile[TILE][PADDED];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // the transposed tile
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * w + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void copy_one_per_thread(float *dst, const float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));               \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

template <typename Launch>
std::vector<float> time_it(Launch launch, int repeat, int batch) {
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  launch();  // warm-up
  CHECK(cudaDeviceSynchronize());
  std::vector<float> samples;
  for (int r = 0; r < repeat; ++r) {
    CHECK(cudaEventRecord(start));
    for (int b = 0; b < batch; ++b) launch();
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    samples.push_back(ms / batch);
  }
  CHECK(cudaGetLastError());
  return samples;
}

int main(int argc, char **argv) {
  int side = argc > 1 ? atoi(argv[1]) : 8192;
  int repeat = argc > 2 ? atoi(argv[2]) : 20;
  int batch = argc > 3 ? atoi(argv[3]) : 10;
  if (side % TILE) {
    fprintf(stderr, "the side must be a multiple of %d\n", TILE);
    return 2;
  }
  size_t n = (size_t)side * side, bytes = n * sizeof(float);
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = (float)((i * 2654435761u) % 1000003) / 1000003.0f;
  float *a, *out;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice));
  dim3 grid(side / TILE, side / TILE), block(TILE, ROWS);
  int blocks = (int)((n + BLOCK - 1) / BLOCK);
  struct Named { const char *name; std::vector<float> ms; };
  std::vector<Named> found = {
      {"cudaMemcpy", time_it([&] { cudaMemcpy(out, a, bytes, cudaMemcpyDeviceToDevice); }, repeat, batch)},
      {"copy", time_it([&] { copy_one_per_thread<<<blocks, BLOCK>>>(out, a, (int)n); }, repeat, batch)},
      {"tile_copy", time_it([&] { tile_copy<<<grid, block>>>(out, a, side); }, repeat, batch)},
      {"naive", time_it([&] { transpose_naive<<<grid, block>>>(out, a, side); }, repeat, batch)},
      {"tiled", time_it([&] { transpose_shared<TILE><<<grid, block>>>(out, a, side); }, repeat, batch)},
      {"padded", time_it([&] { transpose_shared<TILE + 1><<<grid, block>>>(out, a, side); }, repeat, batch)},
  };
  // the padded transpose's output, checked at a few places
  std::vector<float> result(n);
  CHECK(cudaMemcpy(result.data(), out, bytes, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (size_t k = 0; k < n; k += n / 997 + 1) {
    size_t y = k / side, x = k % side;
    wrong += result[y * side + x] != host[x * side + y];
  }
  printf("{\"side\": %d, \"repeat\": %d, \"batch\": %d, \"padded_checked_wrong\": %d, \"ms\": {",
         side, repeat, batch, wrong);
  for (size_t i = 0; i < found.size(); ++i) {
    printf("%s\"%s\": [", i ? ", " : "", found[i].name);
    for (size_t r = 0; r < found[i].ms.size(); ++r) printf("%s%.6f", r ? ", " : "", found[i].ms[r]);
    printf("]");
  }
  printf("}}\n");
  return wrong ? 1 : 0;
}
