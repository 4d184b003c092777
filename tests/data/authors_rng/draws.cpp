// The random draws of the authors' Random Binning code (teddylfwu/RandomBinning,
// codes_KRR_randbin/randFeature.hpp + KRR_OneVsAll_RandBin.cpp), printed exactly, so that
// rbrepro/features/authors_rng.py can be checked bit for bit against the real
// libstdc++ / glibc implementations.
//
// Build:  g++ -O0 -std=c++11 -o draws draws.cpp
// Usage:  draws streams              first 20 outputs of each low-level generator
//         draws grids R d sigma [first]
//                                    the authors' deltas and offsets for one sigma (all R grids
//                                    are drawn; only grids first..R-1 are printed, default 0)
//
// "grids" repeats the authors' loop: srandom(0); a fresh std::default_random_engine
// (minstd_rand0, seed 1) with std::gamma_distribution<double>(2.0, 1.0/sigma); for each of
// the R grids and each of the d+1 dimensions (dimension 0 is a dummy, LIBSVM features are
// 1-based) delta = gamma draw, then u = ((double)rand()/RAND_MAX)*delta.  Every number is
// printed with %.17g, which round-trips a double exactly.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

static void streams() {
    {
        std::minstd_rand0 e;
        std::printf("minstd0");
        for (int i = 0; i < 20; i++) std::printf(" %lu", (unsigned long)e());
        std::printf("\n");
    }
    {
        srandom(0);
        std::printf("rand");
        for (int i = 0; i < 20; i++) std::printf(" %d", rand());
        std::printf("\n");
    }
    {
        srandom(1);
        std::printf("rand_seed1");
        for (int i = 0; i < 20; i++) std::printf(" %d", rand());
        std::printf("\n");
    }
    {
        std::default_random_engine e;
        std::printf("canonical");
        for (int i = 0; i < 20; i++) std::printf(" %.17g", std::generate_canonical<double, 53>(e));
        std::printf("\n");
    }
    {
        std::default_random_engine e;
        std::normal_distribution<double> n;
        std::printf("normal");
        for (int i = 0; i < 20; i++) std::printf(" %.17g", n(e));
        std::printf("\n");
    }
    {
        std::default_random_engine e;
        std::gamma_distribution<double> g(2.0, 1.0);
        std::printf("gamma");
        for (int i = 0; i < 20; i++) std::printf(" %.17g", g(e));
        std::printf("\n");
    }
}

// Same as the authors' class Gamma: its own engine, a gamma distribution with scale 1/sigma.
struct Gamma {
    std::default_random_engine gen;
    std::gamma_distribution<double> dist;
    explicit Gamma(double g) : dist(2.0, 1.0 / g) {}
    double generate() { return dist(gen); }
};

static void grids(int R, int d, double sigma, int first) {
    const int dim = d + 1;  // the authors call random_binning_feature(d+1, r, ..., sigma)
    double *delta = new double[(size_t)R * dim];
    double *u = new double[(size_t)R * dim];
    srandom(0);
    Gamma gamma_dist(sigma);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < dim; j++) {
            delta[(size_t)i * dim + j] = gamma_dist.generate();
            u[(size_t)i * dim + j] = ((double)rand() / RAND_MAX) * delta[(size_t)i * dim + j];
        }
    std::printf("grids %d %d %.17g %d\n", R, d, sigma, first);
    for (int i = first; i < R; i++) {
        std::printf("delta %d", i);
        for (int j = 0; j < dim; j++) std::printf(" %.17g", delta[(size_t)i * dim + j]);
        std::printf("\n");
    }
    for (int i = first; i < R; i++) {
        std::printf("u %d", i);
        for (int j = 0; j < dim; j++) std::printf(" %.17g", u[(size_t)i * dim + j]);
        std::printf("\n");
    }
    delete[] delta;
    delete[] u;
}

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "streams") == 0) {
        streams();
        return 0;
    }
    if ((argc == 5 || argc == 6) && std::strcmp(argv[1], "grids") == 0) {
        grids(std::atoi(argv[2]), std::atoi(argv[3]), std::strtod(argv[4], NULL), argc == 6 ? std::atoi(argv[5]) : 0);
        return 0;
    }
    std::fprintf(stderr, "usage: %s streams | %s grids R d sigma [first]\n", argv[0], argv[0]);
    return 2;
}
