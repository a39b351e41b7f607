/*
 * What the C examples share: a CHECK macro that prints each call and its
 * code, and starting a copy of the running program as a child process with
 * pipes to and from it.
 *
 * The examples start their children with fork + exec of /proc/self/exe.
 * Where programs of this architecture cannot be exec'd directly (an
 * aarch64 build run under qemu-user without binfmt_misc), set
 * ACLMEM_EXAMPLE_RUNNER to the command that runs them, e.g.
 * "qemu-aarch64 -L /usr/aarch64-linux-gnu".
 */
#ifndef ACLMEM_EXAMPLE_H
#define ACLMEM_EXAMPLE_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <acl/acl.h>

static int failures = 0;

#define CHECK(call, want)                                                              \
    do {                                                                               \
        aclError got_ = (call);                                                        \
        if (got_ != (aclError)(want)) {                                                \
            fprintf(stderr, "FAIL %s:%d: %s returned %d, expected %d\n", __FILE__,     \
                    __LINE__, #call, got_, (int)(want));                               \
            failures++;                                                                \
        } else {                                                                       \
            printf("ok   %-64s -> %d\n", #call, got_);                                 \
        }                                                                              \
    } while (0)

#define EXPECT(cond)                                                                   \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
            failures++;                                                                \
        } else {                                                                       \
            printf("ok   %s\n", #cond);                                                \
        }                                                                              \
    } while (0)

/* A child process running this program with `args` (NULL-terminated), its
 * stdin and stdout connected to the parent. */
typedef struct child {
    pid_t pid;
    FILE *to;   /* the child's stdin */
    FILE *from; /* the child's stdout */
} child;

static inline child spawn_self(const char *const args[]) {
    child c = {-1, NULL, NULL};
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        const char *argv[32];
        int n = 0;
        char runner[512] = {0};
        const char *r = getenv("ACLMEM_EXAMPLE_RUNNER");
        if (r != NULL && *r != '\0') {
            strncpy(runner, r, sizeof runner - 1);
            for (char *w = strtok(runner, " "); w != NULL && n < 16; w = strtok(NULL, " ")) {
                argv[n++] = w;
            }
        }
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0) {
            _exit(126);
        }
        self[len] = '\0';
        argv[n++] = self;
        for (int i = 0; args[i] != NULL && n < 31; i++) {
            argv[n++] = args[i];
        }
        argv[n] = NULL;
        execvp(argv[0], (char *const *)argv);
        perror("execvp");
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c.pid = pid;
    c.to = fdopen(in[1], "w");
    c.from = fdopen(out[0], "r");
    return c;
}

/* Reads one line from the child into `buf` (without the newline); echoes
 * it. Returns 0 on success. */
static inline int child_line(child *c, char *buf, size_t len) {
    if (fgets(buf, (int)len, c->from) == NULL) {
        return -1;
    }
    buf[strcspn(buf, "\n")] = '\0';
    printf("     child %d: %s\n", (int)c->pid, buf);
    return 0;
}

static inline void child_send(child *c, const char *line) {
    fprintf(c->to, "%s\n", line);
    fflush(c->to);
}

/* Waits for the child; its exit code, or 128 + signal. */
static inline int child_wait(child *c) {
    if (c->to != NULL) {
        fclose(c->to);
        c->to = NULL;
    }
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (c->from != NULL) {
        fclose(c->from);
        c->from = NULL;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif /* ACLMEM_EXAMPLE_H */
