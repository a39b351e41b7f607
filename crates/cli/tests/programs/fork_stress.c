/*
 * Forks while other threads call ACL: what DataLoader(num_workers > 0) and
 * multiprocessing do while a framework's own threads use the runtime.
 *
 * aclInit, then two threads loop on aclrtMallocPhysical/aclrtFreePhysical
 * and aclrtMalloc/aclrtFree while FORKERS threads each fork ROUNDS times.
 * A third of the children end at once, a third after one aclrtGetMemInfo
 * (which answers 100001: a forked child is a new process, uninitialised),
 * and a third join the machine themselves (aclInit, a device, an
 * allocation freed, aclFinalize), as a fresh process of it may. Every
 * child is waited for with a deadline; one that has not ended by then is
 * killed and counted as hung; one that ends with another code than 0 (or
 * by a signal) counts as failed. Prints "children=N hung=H failed=F" and
 * exits 1 when any hung or failed, 2 on a setup failure, 0 otherwise. The program itself never
 * waits without a bound.
 *
 * usage: fork_stress [rounds-per-forker] [deadline-seconds]
 */
#define _GNU_SOURCE
#include <acl/acl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKERS 4

static atomic_int stop;
static atomic_int hung;
static atomic_int failed;
static atomic_int children;
static int rounds = 50;
static double deadline_s = 20.0;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *physical_loop(void *arg) {
    (void)arg;
    if (aclrtSetDevice(0) != 0) {
        return NULL;
    }
    aclrtPhysicalMemProp prop = {0};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_NORMAL;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    while (!atomic_load(&stop)) {
        aclrtDrvMemHandle h;
        if (aclrtMallocPhysical(&h, 2 << 20, &prop, 0) == 0) {
            aclrtFreePhysical(h);
        }
    }
    return NULL;
}

static void *malloc_loop(void *arg) {
    (void)arg;
    if (aclrtSetDevice(0) != 0) {
        return NULL;
    }
    while (!atomic_load(&stop)) {
        void *p = NULL;
        if (aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == 0) {
            aclrtFree(p);
        }
    }
    return NULL;
}

/* Waits for `pid` until the deadline; kills it and counts it as hung if
 * it has not ended by then. */
static void reap(pid_t pid) {
    double until = now() + deadline_s;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                atomic_fetch_add(&failed, 1);
            }
            return;
        }
        if (r < 0 && errno != EINTR) {
            return;
        }
        if (now() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            atomic_fetch_add(&hung, 1);
            return;
        }
        usleep(1000);
    }
}

static void *fork_loop(void *arg) {
    long me = (long)arg;
    for (int i = 0; i < rounds; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            int code = 0;
            if ((i + me) % 3 == 1) {
                size_t free_b = 0, total = 0;
                code = aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total) == ACL_ERROR_UNINITIALIZE ? 0 : 3;
            } else if ((i + me) % 3 == 2) {
                void *p = NULL;
                code = aclInit(NULL) != 0 || aclrtSetDevice(0) != 0 ||
                       aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST) != 0 || aclrtFree(p) != 0 ||
                       aclrtResetDevice(0) != 0 || aclFinalize() != 0;
            }
            _exit(code);
        }
        if (pid > 0) {
            atomic_fetch_add(&children, 1);
            reap(pid);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        rounds = atoi(argv[1]);
    }
    if (argc > 2) {
        deadline_s = atof(argv[2]);
    }
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) {
        fprintf(stderr, "setup failed\n");
        return 2;
    }
    pthread_t workers[2], forkers[FORKERS];
    pthread_create(&workers[0], NULL, physical_loop, NULL);
    pthread_create(&workers[1], NULL, malloc_loop, NULL);
    for (long f = 0; f < FORKERS; f++) {
        pthread_create(&forkers[f], NULL, fork_loop, (void *)f);
    }
    for (int f = 0; f < FORKERS; f++) {
        pthread_join(forkers[f], NULL);
    }
    atomic_store(&stop, 1);
    pthread_join(workers[0], NULL);
    pthread_join(workers[1], NULL);
    aclrtResetDevice(0);
    aclFinalize();
    printf("children=%d hung=%d failed=%d\n", atomic_load(&children), atomic_load(&hung),
           atomic_load(&failed));
    return atomic_load(&hung) == 0 && atomic_load(&failed) == 0 ? 0 : 1;
}
