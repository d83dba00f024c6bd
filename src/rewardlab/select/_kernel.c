/* The selectors' inner loops, one pass over each problem's row.
 *
 * numpy has no reduction over a short axis without a per-row overhead (a problem's 10
 * candidates), so the vectorised selectors in selectors.py make several passes over whole
 * arrays; a loop over each row in cache does the same work in one. selectors.py keeps the numpy
 * version as the reference: the tests hold these functions to it, bit for bit.
 *
 * Loaded with ctypes by _kernel.py, which checks every array (dtype, C order, shape) before the
 * call, so these functions trust their arguments except for class ids, which are bounds-checked
 * here too (an out-of-range id would write outside the scratch arrays).
 *
 * Built by hatch_build.py with -ffp-contract=off: a fused multiply-add would round the vote
 * tolerance differently from numpy.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef KERNEL_SOURCE_SHA256
#define KERNEL_SOURCE_SHA256 "unknown"
#endif

/* The SHA-256 of this file when it was compiled: _kernel.py refuses a library built from other
 * source (a stale build in an editable install). */
const char *kernel_source(void)
{
    return KERNEL_SOURCE_SHA256;
}

/* Best-of-n. A candidate is usable when its mask entry is set (mask NULL: every one) and its
 * score is not NaN. Per row: the maximum usable score, the usable candidates equal to it
 * (`tied`), their count and the first of them. A row with nothing usable gets maximum -inf,
 * count 0, first -1 and no tied candidate.
 *
 * Written without data-dependent branches (random scores would mispredict half of them): a
 * comparison with NaN is false, so `v > best ? v : best` skips NaN, and a masked score is read
 * as NaN. -inf is never above the running -inf but equals it, so usable -inf scores are tied
 * at -inf exactly when nothing higher is usable. */
void best_of_n(const double *scores, const uint8_t *mask, int64_t rows, int64_t n,
               double *row_max, double *count, int64_t *first, uint8_t *tied)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *s = scores + r * n;
        const uint8_t *ok = mask ? mask + r * n : NULL;
        uint8_t *t = tied + r * n;
        double best = -INFINITY;
        if (ok) {
            for (int64_t j = 0; j < n; j++) {
                double v = ok[j] ? s[j] : NAN;
                best = v > best ? v : best;
            }
            for (int64_t j = 0; j < n; j++)
                t[j] = (ok[j] != 0) & (s[j] == best);  /* a bool byte may hold 2 (a uint8 view) */
        } else {
            for (int64_t j = 0; j < n; j++)
                best = s[j] > best ? s[j] : best;
            for (int64_t j = 0; j < n; j++)
                t[j] = s[j] == best;
        }
        int64_t ties = 0, at = -1;
        for (int64_t j = n - 1; j >= 0; j--) {  /* backwards: the last set is the first */
            ties += t[j];
            at = t[j] ? j : at;
        }
        row_max[r] = best;
        count[r] = (double)ties;
        first[r] = at;
    }
}

/* The mean label of each row's tied candidates (`first` is the first of them), 0 for a row with
 * none. Labels of candidates that are not tied are never added, so a NaN there stays out. */
void tie_credit(const double *labels, const uint8_t *tied, const double *count,
                const int64_t *first, int64_t rows, int64_t n, double *out)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *y = labels + r * n;
        const uint8_t *t = tied + r * n;
        if (count[r] == 1.0) {  /* the usual case with real scores: a unique best */
            out[r] = y[first[r]];
            continue;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n; j++) {
            /* y[j] if tied, else +0.0, without a branch: the flags are random, a branch
             * would mispredict */
            uint64_t bits;
            memcpy(&bits, &y[j], sizeof bits);
            bits &= -(uint64_t)(t[j] != 0);
            double kept;
            memcpy(&kept, &bits, sizeof kept);
            sum += kept;
        }
        out[r] = count[r] > 0 ? sum / count[r] : 0.0;
    }
}

/* Majority vote (weights NULL) or weighted vote over answer classes in [0, n).
 *
 * A candidate votes when its `valid` entry is set (NULL: every one). A class's total is its
 * voters' count, or the sum of their weights in candidate order. The winning classes are those
 * with voters whose total equals the best (majority) or is within numpy.isclose's tolerance
 * of it (weighted; weights are >= 0, so the best is >= 0). Each voter of a winning class gets
 * weight 1 / (voters of its class * winning classes): the probability that its answer is
 * returned under uniform tie-breaking, spread over the class. `chosen` is the first candidate
 * with weight, -1 if none.
 *
 * Non-voters are counted in a spare class n, which never wins. Returns 0; -1 if the scratch
 * arrays cannot be allocated; -2 if a voter's class is outside [0, n). */
int vote(const int64_t *classes, const uint8_t *valid, const double *weights, int64_t rows,
         int64_t n, double *out, int64_t *chosen)
{
    int64_t *members = malloc((size_t)(n + 1) * sizeof *members);
    int64_t *slot = malloc((size_t)n * sizeof *slot);
    double *totals = malloc((size_t)(n + 1) * sizeof *totals);
    double *share = malloc((size_t)(n + 1) * sizeof *share);
    int status = (members && slot && totals && share) ? 0 : -1;
    for (int64_t r = 0; r < rows && status == 0; r++) {
        const int64_t *c = classes + r * n;
        const uint8_t *v = valid ? valid + r * n : NULL;
        const double *w = weights ? weights + r * n : NULL;
        double *o = out + r * n;
        for (int64_t k = 0; k <= n; k++) {
            members[k] = 0;
            totals[k] = 0.0;
        }
        for (int64_t j = 0; j < n; j++) {
            int votes = !v || v[j];
            if (votes && (uint64_t)c[j] >= (uint64_t)n)
                status = -2;
            slot[j] = votes && status == 0 ? c[j] : n;
            members[slot[j]]++;
            totals[slot[j]] += w ? w[j] : 1.0;
        }
        if (status)
            break;
        double best = 0.0;  /* an empty class's total: the numpy reference takes it too */
        for (int64_t k = 0; k < n; k++)
            best = totals[k] > best ? totals[k] : best;
        double floor = w ? best - (1e-8 + 1e-5 * fabs(best)) : best;
        int64_t winners = 0;
        for (int64_t k = 0; k < n; k++)
            winners += members[k] > 0 && totals[k] >= floor;
        for (int64_t k = 0; k < n; k++) {
            int wins = members[k] > 0 && totals[k] >= floor;
            share[k] = wins ? 1.0 / (double)(members[k] * winners) : 0.0;
        }
        share[n] = 0.0;
        int64_t at = -1;
        for (int64_t j = n - 1; j >= 0; j--) {  /* backwards: the last with weight is the first */
            o[j] = share[slot[j]];
            at = o[j] > 0 ? j : at;
        }
        chosen[r] = at;
    }
    free(members);
    free(slot);
    free(totals);
    free(share);
    return status;
}
