#define _DEFAULT_SOURCE
/* Sharing memory between processes when descriptors run short or a peer
 * misbehaves (crates/cli/tests/hostile.rs).
 *
 *   export [tight]   exports 2 MiB of physical memory (no pid check),
 *                    prints "export CODE handle H", serves imports until
 *                    stdin closes; `tight`: then no descriptor is left to
 *                    open (RLIMIT_NOFILE at the highest open one)
 *   import H [LIMIT] with RLIMIT_NOFILE LIMIT (only 0, 1, 2 open before),
 *                    aclInit ("aclInit CODE" when it fails), then imports H:
 *                    "import CODE"
 *   flood PREFIX N   N silent connections to the listener's socket whose
 *                    path starts with PREFIX: "connected K", held until
 *                    stdin closes
 */
#include <acl/acl.h>
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void limit(long n) {
    struct rlimit r = {(rlim_t)n, (rlim_t)n};
    if (setrlimit(RLIMIT_NOFILE, &r)) perror("setrlimit");
}

static int highest_fd(void) {
    int high = 2;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (fd > high && fd != dirfd(d)) high = fd;
    }
    if (d) closedir(d);
    return high;
}

static void wait_for_eof(void) {
    char line[64];
    while (fgets(line, sizeof line, stdin)) {}
}

static int export(int tight) {
    int rc = aclInit(NULL);
    if (rc == 0) rc = aclrtSetDevice(0);
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclrtDrvMemHandle h = NULL;
    uint64_t shareable = 0;
    if (rc == 0) rc = aclrtMallocPhysical(&h, 2 << 20, &prop, 0);
    if (rc == 0)
        rc = aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE,
                                             ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                             &shareable);
    if (tight) {
        limit(highest_fd() + 1);
        /* Fill the gaps below the limit too. */
        while (open("/dev/null", O_RDONLY) >= 0) {}
    }
    printf("export %d handle %llu\n", rc, (unsigned long long)shareable);
    wait_for_eof();
    if (h) aclrtFreePhysical(h);
    aclFinalize();
    return rc != 0;
}

static int import(const char *handle, long lim) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
    if (lim > 0) limit(lim);
    int rc = aclInit(NULL);
    if (rc) {
        printf("aclInit %d\n", rc);
        return 1;
    }
    aclrtSetDevice(0);
    aclrtDrvMemHandle h = NULL;
    rc = aclrtMemImportFromShareableHandle(strtoull(handle, NULL, 10), 0, &h);
    printf("import %d\n", rc);
    if (rc == 0) aclrtFreePhysical(h);
    aclFinalize();
    return rc != 0;
}

static int flood(const char *prefix, int n) {
    /* The listener's socket path: the first one in /proc/net/unix that
     * starts with PREFIX (the machine's private directory and its name). */
    FILE *f = fopen("/proc/net/unix", "r");
    char line[512], name[108] = "";
    while (f && fgets(line, sizeof line, f)) {
        char *at = strstr(line, prefix);
        if (at && at > line && at[-1] == ' ') {
            at[strcspn(at, "\n")] = 0;
            strncpy(name, at, sizeof name - 1);
            break;
        }
    }
    if (f) fclose(f);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, name, strlen(name));
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name) + 1;
    int connected = 0;
    for (int i = 0; name[0] && i < n; i++) {
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
        if (connect(s, (struct sockaddr *)&a, len) == 0)
            connected++;
        else
            close(s);
    }
    printf("connected %d\n", connected);
    wait_for_eof();
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc >= 2 && strcmp(argv[1], "export") == 0)
        return export(argc > 2 && strcmp(argv[2], "tight") == 0);
    if (argc >= 3 && strcmp(argv[1], "import") == 0)
        return import(argv[2], argc > 3 ? atol(argv[3]) : 0);
    if (argc >= 4 && strcmp(argv[1], "flood") == 0) return flood(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: export [tight] | import H [LIMIT] | flood PREFIX N\n");
    return 2;
}
