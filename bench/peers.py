"""Times scikit-learn's RBFSampler (and RBFSampler + Ridge), Nystroem and
PolynomialCountSketch on the data that bench.R wrote, for the same
workloads, and prints one CSV row per timing:
workload,tool,threads,median_s,peak_mb,reps,blas,first_s[,note].

Called by bench.R as: /usr/bin/python3 bench/peers.py SPEC.json
where SPEC lists the workloads with their data files (column-major float64,
as R's writeBin writes a matrix)."""
import json
import statistics
import sys
import time
import tracemalloc

import numpy as np


def blas_name():
    try:
        from threadpoolctl import threadpool_info
        for info in threadpool_info():
            if info.get("user_api") == "blas":
                return "%s %s (%s)" % (info.get("internal_api"),
                                       info.get("version") or "",
                                       info.get("filepath"))
    except Exception:  # threadpoolctl missing or failing
        pass
    # threadpoolctl does not know the reference BLAS: name the loaded library
    try:
        libs = sorted({line.split()[-1] for line in open("/proc/self/maps")
                       if line.split()[-1].split("/")[-1].startswith("lib")
                       and "blas" in line.split()[-1].split("/")[-1].lower()})
        if libs:
            return "reference BLAS (%s)" % " ".join(libs) if not any(
                "openblas" in l for l in libs) else "OpenBLAS (%s)" % " ".join(libs)
    except OSError:
        pass
    return "unknown"


def load(path, n, d):
    return np.fromfile(path, dtype=np.float64).reshape((n, d), order="F")


def timed(fn, reps):
    """Median wall time of reps calls, the peak of memory allocated during
    one call (tracemalloc sees numpy's buffers), in MB, and the time of the
    first (warm-up) call."""
    t0 = time.perf_counter()
    fn()  # warm-up
    first = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    # cheap calls: more of them, as bench.R does
    while statistics.median(times) < 0.5 and len(times) < 11:
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    reps = len(times)
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    del out
    return statistics.median(times), peak, reps, first


def maps(w, x, gamma):
    """Nystroem on the landmarks rff used, or PolynomialCountSketch with
    rff's buckets and signs; the note compares the first 100 rows of the
    features with rff's (Nystroem's columns follow its own order of the
    landmarks, component_indices_)."""
    from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch
    D = w["D"]
    z_rff = load(w["z"], 100, D)
    if w["kind"] == "nystrom":
        landmarks = load(w["landmarks"], D, w["d"])
        tr = Nystroem(kernel="rbf", gamma=gamma, n_components=D, random_state=1)
        tr.fit(landmarks)
        z_rff = z_rff[:, tr.component_indices_]
        tool = "sklearn Nystroem.transform"
    else:
        tr = PolynomialCountSketch(gamma=1.0 / w["lengthscale"] ** 2, degree=w["degree"],
                                   coef0=w["offset"], n_components=D, random_state=1)
        tr.fit(x)
        # rff's sketch: (d + 1) x degree, column-major, as hash_ and sign_
        shape = (w["degree"], w["d"] + 1)
        tr.indexHash_ = load(w["hash"], w["d"] + 1, w["degree"]).T.astype(int).reshape(shape)
        tr.bitHash_ = load(w["sign"], w["d"] + 1, w["degree"]).T.reshape(shape)
        tool = "sklearn PolynomialCountSketch.transform"
    diff = np.max(np.abs(tr.transform(x[:100]) - z_rff))
    med, peak, reps, first = timed(lambda: tr.transform(x), w["reps"])
    return med, peak, reps, first, tool, "max |rff - sklearn| = %.1e (100 rows)" % diff


def main():
    spec = json.load(open(sys.argv[1]))
    threads = spec["threads"]
    from threadpoolctl import threadpool_limits
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import Ridge
    blas = blas_name()
    with threadpool_limits(limits=threads):
        for w in spec["workloads"]:
            x = load(w["x"], w["n"], w["d"])
            # gamma = 1 / (2 l^2) is the Gaussian kernel with lengthscale l
            gamma = 1.0 / (2.0 * w["lengthscale"] ** 2)
            note = ""
            if w["kind"] in ("nystrom", "polynomial"):
                med, peak, reps, first, tool, note = maps(w, x, gamma)
                print("%s,%s,%d,%.6f,%.1f,%d,%s,%.6f,%s" % (
                    w["workload"], tool, threads, med, peak, reps, blas.replace(",", ";"),
                    first, note))
                sys.stdout.flush()
                continue
            sampler = RBFSampler(gamma=gamma, n_components=w["D"], random_state=1)
            sampler.fit(x)
            if w["kind"] == "featurize":
                med, peak, reps, first = timed(lambda: sampler.transform(x), w["reps"])
                tool = "sklearn RBFSampler.transform"
            else:
                y = np.fromfile(w["y"], dtype=np.float64)
                n = w["n"]

                def fit():
                    z = sampler.transform(x)
                    # rff_ridge's penalty n * lambda on Z'Z is alpha here
                    return Ridge(alpha=n * w["lambda"], solver="cholesky",
                                 fit_intercept=True).fit(z, y)
                med, peak, reps, first = timed(fit, w["reps"])
                tool = "sklearn RBFSampler + Ridge(cholesky)"
            print("%s,%s,%d,%.6f,%.1f,%d,%s,%.6f" % (w["workload"], tool, threads, med,
                                                     peak, reps, blas.replace(",", ";"),
                                                     first))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
