/*
 * harness.c: a small stand-in for the Python profiling harness whose run directories nsys-gate
 * reads. It does no real work and needs no GPU: it pushes the same NVTX push/pop ranges the
 * harness pushes, around short timed waits, so that real Nsight Systems traces of it look like
 * traces of a real profiling run.
 *
 * A normal run (no flags):
 *
 *   warmup 0                      warm-up passes (--warmup), before the capture range, so nsys
 *     preprocessing > resize      records none of them when it captures by NVTX range
 *     inference
 *     postprocessing > resize
 *   profile-target                the capture range (--capture): nsys records from its push
 *     iteration 0                 one range per measured pass (--iterations), holding the same
 *       preprocessing > resize    nested work as a warm-up pass
 *       inference
 *       postprocessing > resize
 *     iteration 1
 *     ...
 *
 * Every other flag bends that picture into one of the failure modes nsys-gate must recognise,
 * or (--llama) into the shape of a real LLM inference trace; see usage() and
 * tests/harness/README.md. Build (the NVTX v3 headers are header-only):
 *
 *   gcc -O2 -std=c11 -Wall -Wextra -I NVTX_INCLUDE -o harness harness.c -ldl -pthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdint.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_INDEXES 256

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */
/* ---------------------------------------------------------------------------------------- */

struct options {
    int warmup;                   /* warm-up passes before the capture range */
    int iterations;               /* measured passes, indexes 0 .. iterations-1 */
    const char *capture;          /* name of the capture range */
    int capture_range;            /* 0: measured passes at top level, no capture range */
    int capture_twice;            /* two capture ranges one after the other */
    int skip_from;                /* -1, or stop the measured loop before this index */
    int unclosed_last;            /* exit in the middle of the last measured pass */
    int outside_iterations;       /* extra passes after the capture range, same thread */
    int *indexes;                 /* the indexes of the measured passes, in order */
    int index_storage[MAX_INDEXES]; /* those given with --indexes */
    int index_count;              /* 0: use 0 .. iterations-1 */
    int slow[MAX_INDEXES];        /* indexes whose inference takes 4 times as long */
    int slow_count;
    int worker_iterations;        /* passes run by a worker thread during the measured loop */
    const char *domain;           /* NULL: default NVTX domain */
    int hostile_names;            /* work ranges with names that break naive CSV readers */
    int nvtx;                     /* 0: no NVTX call at all */
    const char *iteration_format; /* printf format of an iteration's name, one %d */
    int gpu_markers;              /* NVTX marks where a real program would launch GPU work */
    int no_wait;                  /* no timed waits: many ranges fast (large-trace benchmarks) */
    int llama_layers;             /* 0, or the layers of an LLM decoding step (--llama) */
    int first_pass_factor;        /* the first measured pass's waits take this many times as long */
    int cold_forward_us;          /* --llama: host work of each forward_layer_L in the first pass */
    int realtime;                 /* the measured loop at real-time priority, where permitted */
    int extra_inference_us;       /* more work in every pass's inference (a slower version) */
    int ranks;                    /* 0, or start this many processes, one per rank (--ranks) */
    int rank;                     /* -1, or the rank this process is (--rank) */
    int slow_rank;                /* -1, or the rank given --rank-extra-us */
    int slow_rank_us;             /* its more work in every pass's inference */
    int short_rank;               /* -1, or the rank given --rank-skip-from */
    int short_rank_from;          /* it stops the measured loop before this index */
};

static struct options opt = {
    .warmup = 1,
    .iterations = 5,
    .capture = "profile-target",
    .capture_range = 1,
    .skip_from = -1,
    .nvtx = 1,
    .iteration_format = "iteration %d",
    .first_pass_factor = 1,
    .rank = -1,
    .slow_rank = -1,
    .short_rank = -1,
};

static void usage(FILE *out)
{
    fputs(
        "usage: harness [OPTIONS]\n"
        "\n"
        "Pushes the NVTX ranges of a profiling run around short timed waits.\n"
        "\n"
        "  --warmup N               warm-up passes before the capture range (default 1)\n"
        "  --iterations N           measured passes, indexes 0..N-1 (default 5)\n"
        "  --capture NAME           name of the capture range (default profile-target)\n"
        "  --no-capture-range       measured passes at top level, no capture range\n"
        "  --capture-twice          two capture ranges, each holding the measured passes\n"
        "  --skip-from K            stop the measured loop before index K (passes K.. never run)\n"
        "  --unclosed-last          exit() in the middle of the last measured pass,\n"
        "                           leaving its ranges and the capture range open\n"
        "  --outside-iterations N   N more passes after the capture range, numbered on\n"
        "  --indexes LIST           explicit indexes of the measured passes, e.g. 0,1,1,2,7\n"
        "  --slow LIST              indexes whose inference takes four times as long\n"
        "  --worker-thread N        a worker thread runs N passes (indexes 0..N-1) at its top\n"
        "                           level while the main thread runs the measured loop\n"
        "  --domain NAME            push every range in the NVTX domain NAME\n"
        "  --hostile-names          name the work ranges with commas, quotes, newlines,\n"
        "                           Unicode, markdown and HTML\n"
        "  --no-nvtx                make no NVTX call at all\n"
        "  --iteration-format FMT   printf format of an iteration's name (default 'iteration %d')\n"
        "  --gpu-markers            NVTX marks (gpu:kernel, gpu:memcpy) where a real program\n"
        "                           would launch GPU work, also between iterations and on a\n"
        "                           loader thread that pushes no range\n"
        "  --extra-inference-us N   N more microseconds of work in every pass's inference\n"
        "                           (the same program made slower: comparison fixtures)\n"
        "  --no-wait                no timed waits: pushes ranges as fast as it can (to record\n"
        "                           traces with a million ranges for benchmarks)\n"
        "  --llama LAYERS           each pass is an LLM decoding step of token T (its index):\n"
        "                           embed, then per layer L a range layer_L_token_T holding\n"
        "                           ensure_layer_L_weights and forward_layer_L, then sample;\n"
        "                           with --gpu-markers, the shape of its GPU run: marks in\n"
        "                           embed, forward_layer_L and sample, host work in\n"
        "                           ensure_layer_L_weights, little time in layer_L_token_T\n"
        "  --first-pass-factor F    every wait of the first measured pass takes F times as long\n"
        "                           (an integer; default 1)\n"
        "  --cold-forward-us N      with --llama: in the first measured pass each forward_layer_L\n"
        "                           first does N us of host work, then launches its kernels (a\n"
        "                           cold start: handles created, kernels loaded on first call)\n"
        "  --realtime               run the measured loop at real-time priority (SCHED_FIFO 1)\n"
        "                           where permitted, so that other processes on a busy machine\n"
        "                           do not make waits end milliseconds late\n"
        "  --ranks N                start N processes of this program (each `--rank R`, R =\n"
        "                           0..N-1, by fork and exec), as a distributed launcher starts\n"
        "                           one process per rank, and wait for them\n"
        "  --rank R                 run as rank R (what --ranks gives each process; alone, one\n"
        "                           rank of a run recorded one trace per rank)\n"
        "  --rank-extra-us R:N      rank R does N more microseconds in every pass's inference\n"
        "  --rank-skip-from R:K     rank R stops its measured loop before index K\n"
        "  -h, --help               show this help\n",
        out);
}

static void die(const char *fmt, const char *arg)
{
    fputs("harness: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n", stderr);
    exit(2);
}

static int parse_count(const char *flag, const char *text)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > INT_MAX)
        die("%s needs a non-negative integer", flag);
    return (int)value;
}

/* "0,1,1,2,7" -> {0, 1, 1, 2, 7}; returns the count. */
static int parse_list(const char *flag, const char *text, int *out)
{
    int count = 0;
    const char *p = text;
    while (*p != '\0') {
        char *end;
        errno = 0;
        long value = strtol(p, &end, 10);
        if (errno != 0 || end == p || value < 0 || value > INT_MAX || count == MAX_INDEXES)
            die("%s needs a comma-separated list of non-negative integers", flag);
        out[count++] = (int)value;
        if (*end == ',')
            end++;
        else if (*end != '\0')
            die("%s needs a comma-separated list of non-negative integers", flag);
        p = end;
    }
    if (count == 0)
        die("%s needs at least one index", flag);
    return count;
}

/* The iteration format must hold exactly one integer conversion and nothing else. */
static void check_iteration_format(const char *fmt)
{
    int conversions = 0;
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        if (p[1] != 'd')
            die("--iteration-format allows only %%d and %%%% conversions, got '%s'", fmt);
        conversions++;
        p++;
    }
    if (conversions != 1)
        die("--iteration-format needs exactly one %%d, got '%s'", fmt);
}

/* "R:N" -> rank R, value N */
static void parse_rank_value(const char *flag, const char *text, int *rank, int *value)
{
    char buffer[64];
    const char *colon = strchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof buffer)
        die("%s needs RANK:VALUE", flag);
    memcpy(buffer, text, (size_t)(colon - text));
    buffer[colon - text] = '\0';
    *rank = parse_count(flag, buffer);
    *value = parse_count(flag, colon + 1);
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE()                                   \
    do {                                                \
        if (value == NULL)                              \
            die("%s needs a value", flag);              \
        i++;                                            \
    } while (0)
        if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(flag, "--warmup") == 0) {
            NEEDS_VALUE();
            opt.warmup = parse_count(flag, value);
        } else if (strcmp(flag, "--iterations") == 0) {
            NEEDS_VALUE();
            opt.iterations = parse_count(flag, value);
        } else if (strcmp(flag, "--capture") == 0) {
            NEEDS_VALUE();
            opt.capture = value;
        } else if (strcmp(flag, "--no-capture-range") == 0) {
            opt.capture_range = 0;
        } else if (strcmp(flag, "--no-wait") == 0) {
            opt.no_wait = 1;
        } else if (strcmp(flag, "--capture-twice") == 0) {
            opt.capture_twice = 1;
        } else if (strcmp(flag, "--skip-from") == 0) {
            NEEDS_VALUE();
            opt.skip_from = parse_count(flag, value);
        } else if (strcmp(flag, "--unclosed-last") == 0) {
            opt.unclosed_last = 1;
        } else if (strcmp(flag, "--outside-iterations") == 0) {
            NEEDS_VALUE();
            opt.outside_iterations = parse_count(flag, value);
        } else if (strcmp(flag, "--indexes") == 0) {
            NEEDS_VALUE();
            opt.index_count = parse_list(flag, value, opt.index_storage);
            opt.indexes = opt.index_storage;
        } else if (strcmp(flag, "--extra-inference-us") == 0) {
            NEEDS_VALUE();
            opt.extra_inference_us = parse_count(flag, value);
        } else if (strcmp(flag, "--slow") == 0) {
            NEEDS_VALUE();
            opt.slow_count = parse_list(flag, value, opt.slow);
        } else if (strcmp(flag, "--worker-thread") == 0) {
            NEEDS_VALUE();
            opt.worker_iterations = parse_count(flag, value);
        } else if (strcmp(flag, "--domain") == 0) {
            NEEDS_VALUE();
            opt.domain = value;
        } else if (strcmp(flag, "--hostile-names") == 0) {
            opt.hostile_names = 1;
        } else if (strcmp(flag, "--no-nvtx") == 0) {
            opt.nvtx = 0;
        } else if (strcmp(flag, "--iteration-format") == 0) {
            NEEDS_VALUE();
            check_iteration_format(value);
            opt.iteration_format = value;
        } else if (strcmp(flag, "--gpu-markers") == 0) {
            opt.gpu_markers = 1;
        } else if (strcmp(flag, "--llama") == 0) {
            NEEDS_VALUE();
            opt.llama_layers = parse_count(flag, value);
            if (opt.llama_layers == 0)
                die("%s needs at least one layer", flag);
        } else if (strcmp(flag, "--realtime") == 0) {
            opt.realtime = 1;
        } else if (strcmp(flag, "--cold-forward-us") == 0) {
            NEEDS_VALUE();
            opt.cold_forward_us = parse_count(flag, value);
        } else if (strcmp(flag, "--ranks") == 0) {
            NEEDS_VALUE();
            opt.ranks = parse_count(flag, value);
        } else if (strcmp(flag, "--rank") == 0) {
            NEEDS_VALUE();
            opt.rank = parse_count(flag, value);
        } else if (strcmp(flag, "--rank-extra-us") == 0) {
            NEEDS_VALUE();
            parse_rank_value(flag, value, &opt.slow_rank, &opt.slow_rank_us);
        } else if (strcmp(flag, "--rank-skip-from") == 0) {
            NEEDS_VALUE();
            parse_rank_value(flag, value, &opt.short_rank, &opt.short_rank_from);
        } else if (strcmp(flag, "--first-pass-factor") == 0) {
            NEEDS_VALUE();
            opt.first_pass_factor = parse_count(flag, value);
            if (opt.first_pass_factor == 0)
                die("%s needs a factor of at least 1", flag);
        } else {
            usage(stderr);
            die("unknown argument '%s'", flag);
        }
#undef NEEDS_VALUE
    }
    if (opt.index_count == 0) {
        opt.indexes = malloc((size_t)(opt.iterations > 0 ? opt.iterations : 1) * sizeof(int));
        if (opt.indexes == NULL)
            die("out of memory for %s", "--iterations");
        for (int i = 0; i < opt.iterations; i++)
            opt.indexes[i] = i;
        opt.index_count = opt.iterations;
    }
    if (opt.rank >= 0 && opt.rank == opt.slow_rank)
        opt.extra_inference_us += opt.slow_rank_us;
    if (opt.rank >= 0 && opt.rank == opt.short_rank)
        opt.skip_from = opt.short_rank_from;
    if (opt.capture_twice && !opt.capture_range)
        die("%s cannot be combined with --no-capture-range", "--capture-twice");
    if (opt.llama_layers > 0 && (opt.hostile_names || opt.slow_count > 0))
        die("%s cannot be combined with --hostile-names or --slow", "--llama");
}

/* ---------------------------------------------------------------------------------------- */
/* NVTX                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static nvtxDomainHandle_t domain; /* NULL: the default domain */

static void range_push(const char *name)
{
    if (!opt.nvtx)
        return;
    if (domain == NULL) {
        nvtxRangePushA(name);
        return;
    }
    nvtxEventAttributes_t attributes;
    memset(&attributes, 0, sizeof attributes);
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    nvtxDomainRangePushEx(domain, &attributes);
}

static void range_pop(void)
{
    if (!opt.nvtx)
        return;
    if (domain == NULL)
        nvtxRangePop();
    else
        nvtxDomainRangePop(domain);
}

/* An instantaneous NVTX mark (never a range) in the default domain: "a real program would
 * launch GPU work here". scripts/make-fixtures.sh turns them into synthetic CUDA work. */
static void gpu_mark(const char *what)
{
    if (opt.nvtx && opt.gpu_markers)
        nvtxMarkA(what);
}

/* ---------------------------------------------------------------------------------------- */
/* Timed work                                                                               */
/* ---------------------------------------------------------------------------------------- */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* How many times as long every wait of this thread takes: --first-pass-factor during the first
 * measured pass (main thread only), else 1. */
static _Thread_local int wait_factor = 1;
static int first_pass_done; /* the first measured pass has started (--capture-twice: once) */
static int in_first_pass;   /* the first measured pass is running (--cold-forward-us) */

/* Waits until `deadline` (CLOCK_MONOTONIC ns): sleeps most of it (the machine is shared) and
 * spins the last 50 us, so that it ends close to the deadline. */
static void wait_until(long long deadline)
{
    long long sleep_until = deadline - 50000LL;
    if (sleep_until > now_ns()) {
        struct timespec ts = {
            .tv_sec = (time_t)(sleep_until / 1000000000LL),
            .tv_nsec = (long)(sleep_until % 1000000000LL),
        };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (now_ns() < deadline) {
    }
}

/* Waits `us` microseconds (times wait_factor). */
static void work_us(long us)
{
    if (opt.no_wait)
        return;
    wait_until(now_ns() + us * wait_factor * 1000LL);
}

/* Waits until `us` microseconds (times wait_factor) after the previous deadline of `schedule`:
 * a wait that ended late (another process held the core) is made up by the next ones, so a
 * pass keeps its length. */
static void work_scheduled_us(long long *schedule, long us)
{
    if (opt.no_wait)
        return;
    *schedule += us * wait_factor * 1000LL;
    wait_until(*schedule);
}

/* Names of the work ranges of one pass. */
struct work_names {
    const char *preprocessing;
    const char *preprocessing_child;
    const char *inference;
    const char *postprocessing;
    const char *postprocessing_child;
    const char *extra[3]; /* further top-level work ranges, NULL when absent */
};

static const struct work_names plain_names = {
    .preprocessing = "preprocessing",
    .preprocessing_child = "resize",
    .inference = "inference",
    .postprocessing = "postprocessing",
    .postprocessing_child = "resize",
};

/* Names that a reader of nsys's CSV (not RFC 4180: quotes are not doubled, newlines are raw)
 * or a markdown renderer gets wrong when it is careless. */
static const struct work_names hostile_names = {
    /* comma and double quotes: nsys wraps the value in quotes without doubling the inner ones */
    .preprocessing = "pre,processing \"quoted\"",
    /* '|' (a markdown table cell), CJK, a combining accent (e + U+0301), emoji incl. a ZWJ
     * sequence */
    .preprocessing_child = "resize | \xe7\xb8\xae\xe6\x94\xbe | cafe\xcc\x81 | "
                           "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb \xf0\x9f\x9a\x80",
    /* a comma and a raw newline: the row spans two lines of the CSV */
    .inference = "infer,\nence",
    /* HTML and GitHub mentions / references, harmless only when escaped */
    .postprocessing = "<script>alert(\"x\")</script> <b>bold</b> @octocat @org/team #123",
    /* a leading ':' (what newer nsys writes before a default-domain name) and markdown code */
    .postprocessing_child = ":leading colon `tick` ```fence```",
    .extra = {
        "\"sync\"",      /* quotes and no comma: nsys writes it as is, unwrapped */
        "x\",1,2,\"y",   /* looks like the end of one quoted field and the start of others */
        "multi\nline",   /* a raw newline and no comma */
    },
};

static int is_slow(int index)
{
    for (int i = 0; i < opt.slow_count; i++)
        if (opt.slow[i] == index)
            return 1;
    return 0;
}

/* One pass: preprocessing > resize, inference (the longest), postprocessing > resize.
 * With `die_midway`, the process exits in the middle of inference, leaving every open range
 * (this pass's, the capture range) unclosed, as an escaped error would. It calls exit(), not
 * _exit(): nsys's NVTX injection flushes its buffered events at exit, and after _exit() the
 * trace would lose most of the run. */
static void run_pass(int index, int die_midway)
{
    const struct work_names *n = opt.hostile_names ? &hostile_names : &plain_names;

    range_push(n->preprocessing);
    work_us(150);
    range_push(n->preprocessing_child);
    gpu_mark("gpu:memcpy");
    work_us(350);
    range_pop();
    work_us(100);
    range_pop();

    range_push(n->inference);
    gpu_mark("gpu:kernel");
    work_us(500);
    if (die_midway)
        exit(0);
    gpu_mark("gpu:kernel");
    work_us((is_slow(index) ? 4000 : 1000) + opt.extra_inference_us);
    range_pop();

    range_push(n->postprocessing);
    work_us(100);
    range_push(n->postprocessing_child);
    work_us(250);
    range_pop();
    work_us(100);
    range_pop();

    for (int i = 0; i < 3 && n->extra[i] != NULL; i++) {
        range_push(n->extra[i]);
        work_us(150);
        range_pop();
    }
}

/* One LLM decoding step of token `token` (--llama): the shape of a public GPU inference trace
 * whose passes hold per-layer ranges with decimal indexes in their names. 8 layers give 24
 * indexed ranges a pass and 1,536 distinct scoped names over 64 passes, as that trace had.
 *
 *   embed
 *   layer_0_token_T > ensure_layer_0_weights, forward_layer_0
 *   ...
 *   layer_{LAYERS-1}_token_T > ...
 *   sample
 *
 * About 1.9 ms with 8 layers; --first-pass-factor 15 makes the first measured pass ~28 ms, as a
 * prompt's prefill makes the first token's.
 *
 * With --gpu-markers (the llama-gpu fixture) the pass has the shape of that trace's GPU run, in
 * about 1.97 ms with 8 layers: `embed` (30 us) launches a kernel; each `layer_L_token_T` spends
 * only 9 us of its own (3 us before, between and after its children); `ensure_layer_L_weights`
 * does 80 us of host work and launches nothing; `forward_layer_L` (140 us) launches its kernels
 * at its start and 100 us in; `sample` launches a kernel. The marks cost nothing without
 * --gpu-markers, and the waits of forward_layer_L end where its one wait did. With
 * --cold-forward-us N (the llama-cold fixture) each forward_layer_L of the first measured pass
 * first does N us of host work and then launches the same kernels: a cold start, whose range is
 * mostly host time in that pass only.
 *
 * The waits follow one schedule from the start of the pass (work_scheduled_us): a wait that a
 * busy machine made end late shortens the next ones, so the pass keeps its length. `sample`
 * takes 30-130 us by token, in a fixed pattern: steady passes then spread by about +-2.5 %, as
 * real ones do, and their median absolute deviation (~30 us) is not so small that a few
 * microseconds of noise at the end of a pass make it a slow iteration (CONTRACT.md: over
 * median + 5 x MAD). */
static void run_llama_pass(int token)
{
    char name[96];
    long long schedule = now_ns();
    const int gpu = opt.gpu_markers;
    const long gap = gpu ? 3 : 10;

    range_push("embed");
    gpu_mark("gpu:kernel");
    work_scheduled_us(&schedule, gpu ? 30 : 60);
    range_pop();
    work_scheduled_us(&schedule, gpu ? 5 : 10);

    for (int layer = 0; layer < opt.llama_layers; layer++) {
        snprintf(name, sizeof name, "layer_%d_token_%d", layer, token);
        range_push(name);
        work_scheduled_us(&schedule, gap);
        snprintf(name, sizeof name, "ensure_layer_%d_weights", layer);
        range_push(name);
        work_scheduled_us(&schedule, gpu ? 80 : 40);
        range_pop();
        work_scheduled_us(&schedule, gap);
        snprintf(name, sizeof name, "forward_layer_%d", layer);
        range_push(name);
        if (in_first_pass && opt.cold_forward_us > 0)
            work_scheduled_us(&schedule, opt.cold_forward_us); /* cold: set-up before the launches */
        gpu_mark("gpu:kernel");
        work_scheduled_us(&schedule, 100);
        gpu_mark("gpu:kernel");
        work_scheduled_us(&schedule, 40);
        range_pop();
        work_scheduled_us(&schedule, gap);
        range_pop();
        work_scheduled_us(&schedule, gap);
    }

    range_push("sample");
    gpu_mark("gpu:kernel");
    work_scheduled_us(&schedule, 80 + 10 * ((token * 7) % 11 - 5));
    range_pop();
}

static void iteration_name(char *buffer, size_t size, int index)
{
    snprintf(buffer, size, opt.iteration_format, index);
}

static void run_iteration(int index, int die_midway)
{
    char name[256];
    iteration_name(name, sizeof name, index);
    range_push(name);
    if (opt.llama_layers > 0)
        run_llama_pass(index);
    else
        run_pass(index, die_midway);
    range_pop();
}

/* ---------------------------------------------------------------------------------------- */
/* Threads                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* A worker that runs its own `iteration N` passes at its top level. */
static void *worker_main(void *unused)
{
    (void)unused;
    /* nsys spends a few hundred microseconds on a thread's first NVTX call: pay it before the
     * first iteration (naming the thread is an NVTX call that records no range) */
    if (opt.nvtx)
        nvtxNameOsThreadA((uint32_t)gettid(), "worker");
    work_us(300);
    for (int i = 0; i < opt.worker_iterations; i++) {
        run_iteration(i, 0);
        work_us(300);
    }
    return NULL;
}

/* A data-loader thread that pushes no range and "launches" one copy: GPU work launched
 * outside every NVTX range. */
static void *loader_main(void *unused)
{
    (void)unused;
    work_us(200);
    gpu_mark("gpu:memcpy");
    work_us(300);
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* The run                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* --realtime: the main thread at SCHED_FIFO priority 1 during the measured loop. On a shared
 * machine a sleeping thread can wake milliseconds late when other processes hold every core; a
 * real-time thread goes ahead of them (not always at once: a kernel without full preemption
 * first lets a running task reach a preemption point). It sleeps most of the time and spins
 * only the last 50 us of each wait. Without the privilege it says so and carries on. */
static void set_realtime(int on)
{
    if (!opt.realtime)
        return;
    struct sched_param param = {.sched_priority = on ? 1 : 0};
    int rc = pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &param);
    if (rc != 0 && on)
        fprintf(stderr, "harness: --realtime: %s; the measured loop runs at normal priority\n",
                strerror(rc));
}

static void measured_loop(void)
{
    pthread_t worker, loader;
    int have_worker = opt.worker_iterations > 0;
    int have_loader = opt.gpu_markers;

    if (have_worker && pthread_create(&worker, NULL, worker_main, NULL) != 0)
        die("%s", "could not start the worker thread");
    if (have_loader && pthread_create(&loader, NULL, loader_main, NULL) != 0)
        die("%s", "could not start the loader thread");
    set_realtime(1); /* after starting the threads, which would inherit it */

    for (int i = 0; i < opt.index_count; i++) {
        int index = opt.indexes[i];
        if (opt.skip_from >= 0 && index >= opt.skip_from)
            break;
        if (opt.gpu_markers) {
            /* work launched inside the capture range but outside every iteration */
            gpu_mark("gpu:kernel");
            work_us(200);
        }
        if (!first_pass_done) {
            wait_factor = opt.first_pass_factor;
            in_first_pass = 1;
        }
        first_pass_done = 1;
        run_iteration(index, opt.unclosed_last && i == opt.index_count - 1);
        wait_factor = 1;
        in_first_pass = 0;
        work_us(100);
    }
    set_realtime(0);

    if (have_loader)
        pthread_join(loader, NULL);
    if (have_worker)
        pthread_join(worker, NULL);
}

/* --ranks N: one process per rank, each this program again with `--rank R` (exec, as a launcher
 * starts its workers: nsys follows an exec'd child), then wait for every one. */
static int launch_ranks(int argc, char **argv)
{
    pid_t children[256];
    if (opt.ranks > 256)
        die("%s: at most 256 ranks", "--ranks");
    for (int r = 0; r < opt.ranks; r++) {
        pid_t pid = fork();
        if (pid < 0)
            die("%s", "fork failed");
        if (pid == 0) {
            char rank[16];
            snprintf(rank, sizeof rank, "%d", r);
            char **args = calloc((size_t)argc + 3, sizeof(char *));
            if (args == NULL)
                die("%s", "out of memory");
            for (int i = 0; i < argc; i++)
                args[i] = argv[i];
            args[argc] = "--rank";
            args[argc + 1] = rank;
            execv(argv[0], args);
            die("%s", "exec failed");
        }
        children[r] = pid;
    }
    int failed = 0;
    for (int r = 0; r < opt.ranks; r++) {
        int status;
        if (waitpid(children[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (opt.ranks > 0 && opt.rank < 0)
        return launch_ranks(argc, argv);

    /* Sleep as precisely as the kernel allows (the default slack is 50 us). */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

    /* Load nsys's NVTX injection now rather than at the first push, which may be the first
     * measured iteration's when there is no warm-up (the harness imports nvtx at start-up). */
    if (opt.nvtx) {
        nvtxInitialize(NULL);
        /* nsys also sets up its event buffers on the first events: a mark (not a range) pays
         * for that here */
        nvtxMarkA("harness started");
        nvtxMarkA("harness started");
        work_us(500);
    }
    if (opt.nvtx && opt.domain != NULL)
        domain = nvtxDomainCreateA(opt.domain);

    for (int w = 0; w < opt.warmup; w++) {
        char name[64];
        snprintf(name, sizeof name, "warmup %d", w);
        range_push(name);
        if (opt.llama_layers > 0)
            run_llama_pass(w);
        else
            run_pass(-1, 0);
        range_pop();
    }
    work_us(200);

    int captures = opt.capture_twice ? 2 : 1;
    for (int c = 0; c < captures; c++) {
        if (opt.capture_range) {
            range_push(opt.capture);
            /* let nsys settle into the capture, as the harness's synchronisation does */
            work_us(300);
        }
        if (opt.hostile_names && opt.nvtx) {
            /* nsys spends about 3 ms on the first non-ASCII string it records; pay it here, with
             * a mark (not a range), rather than in the first measured iteration */
            nvtxMarkA(hostile_names.preprocessing_child);
            work_us(100);
        }
        measured_loop();
        if (opt.capture_range)
            range_pop();
        work_us(200);
    }

    int next = 0;
    for (int i = 0; i < opt.index_count; i++)
        if (opt.indexes[i] >= next)
            next = opt.indexes[i] + 1;
    for (int k = 0; k < opt.outside_iterations; k++) {
        run_iteration(next + k, 0);
        work_us(100);
    }

    if (opt.nvtx && domain != NULL)
        nvtxDomainDestroy(domain);
    return 0;
}
