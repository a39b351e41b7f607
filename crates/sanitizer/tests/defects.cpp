// Seeded defects in C++ code, chosen by argv[1]; `clean` makes none. The
// shapes C++ code gets wrong: an RAII owner copied (two destructors free
// one handle), a moved-from owner used, an owner never destroyed, and,
// across two processes, a whitelisted child that never imports. Each call
// is one the emulated library answers or accepts: the program never
// crashes.
#include <acl/acl.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

aclrtPhysicalMemProp Hbm() {
    aclrtPhysicalMemProp p;
    std::memset(&p, 0, sizeof p);
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    return p;
}

// Owns one physical handle; the copy constructor is the compiler's (the
// defect of "double-free": both copies free it).
class Block {
  public:
    explicit Block(std::size_t size) {
        aclrtPhysicalMemProp p = Hbm();
        aclrtMallocPhysical(&handle_, size, &p, 0);  // MADE
    }
    Block(Block &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Block(const Block &) = default;
    ~Block() {
        if (handle_ != nullptr) aclrtFreePhysical(handle_);  // FREED
    }
    aclrtDrvMemHandle handle() const { return handle_; }

  private:
    aclrtDrvMemHandle handle_ = nullptr;
};

// Maps a block at a reservation of its own, for its lifetime.
class Mapping {
  public:
    Mapping(aclrtDrvMemHandle h, std::size_t size) : size_(size) {
        aclrtReserveMemAddress(&va_, size_, 0, nullptr, 0);
        aclrtMapMem(va_, size_, 0, h, 0);  // MAPPED
    }
    ~Mapping() {
        aclrtUnmapMem(va_);
        aclrtReleaseMemAddress(va_);
    }

  private:
    void *va_ = nullptr;
    std::size_t size_;
};

void CopyTwice() {
    Block weights(2 * kMiB);
    Block copy = weights;  // both destructors free the same handle
    (void)copy;
}

void UseAfterMove() {
    Block first(2 * kMiB);
    aclrtDrvMemHandle kept = first.handle();  // kept past the move
    { Block owner(std::move(first)); }        // freed here
    void *va = nullptr;
    aclrtReserveMemAddress(&va, 2 * kMiB, 0, nullptr, 0);
    aclrtMapMem(va, 2 * kMiB, 0, kept, 0);  // USE-AFTER-MOVE
    aclrtReleaseMemAddress(va);
}

void Forget() {
    auto *leaked = new Block(2 * kMiB);  // LEAK
    (void)leaked;
}

void Clean() {
    std::vector<Block> blocks;
    for (int i = 0; i < 3; i++) blocks.emplace_back(2 * kMiB);
    std::vector<std::unique_ptr<Mapping>> maps;
    for (const Block &b : blocks) maps.push_back(std::make_unique<Mapping>(b.handle(), 2 * kMiB));
    maps.clear();
}

int WhitelistNeverImported() {
    int down[2];
    if (pipe(down) != 0) return 2;
    std::fflush(nullptr);
    pid_t child = fork();
    if (child == 0) {
        std::uint64_t s = 0;
        if (read(down[0], &s, sizeof s) != sizeof s) _exit(4);
        std::exit(0);  // never imports
    }
    Block b(2 * kMiB);
    std::uint64_t s = 0;
    aclrtMemExportToShareableHandle(b.handle(), ACL_MEM_HANDLE_TYPE_NONE, 0, &s);
    std::int32_t pid = child;
    aclrtMemSetPidToShareableHandle(s, &pid, 1);  // WHITELIST
    if (write(down[1], &s, sizeof s) != sizeof s) return 4;
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "clean";
    if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0) return 2;
    int rc = 0;
    if (mode == "double-free") {
        CopyTwice();
    } else if (mode == "use-after-free") {
        UseAfterMove();
    } else if (mode == "leak") {
        Forget();
    } else if (mode == "whitelisted-never-imported") {
        rc = WhitelistNeverImported();
    } else if (mode == "clean") {
        Clean();
    } else {
        std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
        return 2;
    }
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}
