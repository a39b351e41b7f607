/*
 * A program whose every call's answer is printed, to see which calls the
 * faults of `aclmem run --fault` / ACLMEM_EMU_FAULTS take: four
 * aclrtMalloc from one line, one from another (the `site` line), frees of
 * what was made, a device count. With the argument `fork`, a forked child
 * (a second process of the machine) does the same, its labels prefixed
 * `child-`, while the parent waits.
 */
#include <acl/acl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void sequence(const char *who) {
    printf("%sset %d\n", who, aclrtSetDevice(0));
    void *p[4] = {0};
    for (int i = 0; i < 4; i++) {
        int rc = aclrtMalloc(&p[i], 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
        printf("%smalloc%d %d %s\n", who, i + 1, rc, p[i] ? "made" : "null");
    }
    void *q = NULL;
    int site = aclrtMalloc(&q, 4096, ACL_MEM_MALLOC_HUGE_FIRST); /* FAULT-SITE */
    printf("%ssite %d %s\n", who, site, q ? "made" : "null");
    for (int i = 0; i < 4; i++) {
        if (p[i] != NULL) {
            printf("%sfree%d %d\n", who, i + 1, aclrtFree(p[i]));
        }
    }
    if (q != NULL) {
        aclrtFree(q);
    }
    uint32_t n = 0;
    printf("%scount %d\n", who, aclrtGetDeviceCount(&n));
    aclrtResetDevice(0);
}

int main(int argc, char **argv) {
    int r = aclInit(NULL);
    printf("init %d\n", r);
    if (r != 0) {
        return 3;
    }
    sequence("");
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child-init %d\n", aclInit(NULL));
            sequence("child-");
            printf("child-fin %d\n", aclFinalize());
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
    }
    printf("fin %d\n", aclFinalize());
    return 0;
}
