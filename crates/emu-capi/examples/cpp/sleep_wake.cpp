// Sleep and wake from C++, the shape of an allocator that owns its ranges
// (vllm-ascend's camem allocator is one): a Region keeps its virtual range
// for its whole life and drops or re-takes the physical memory behind it.
// aclrtGetMemInfo shows the memory released while asleep. Exits 0 on
// success.
//
//   c++ -std=c++17 -Wall -Wextra -I crates/emu-capi/include sleep_wake.cpp
//       -L<dir> -lascendcl -Wl,-rpath,<dir>
#include <acl/acl.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(aclError code, const char *what) {
    if (code != ACL_SUCCESS) {
        throw std::runtime_error(std::string(what) + " returned " + std::to_string(code));
    }
}

#define ACL_CALL(call) check((call), #call)

size_t hbm_free() {
    size_t free_bytes = 0, total = 0;
    ACL_CALL(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total));
    return free_bytes;
}

// A reserved range with physical memory mapped while awake.
class Region {
  public:
    explicit Region(size_t size) : size_(size) {
        std::memset(&prop_, 0, sizeof prop_);
        prop_.handleType = ACL_MEM_HANDLE_TYPE_NONE;
        prop_.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
        prop_.memAttr = ACL_HBM_MEM_HUGE;
        prop_.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        prop_.location.id = 0;
        ACL_CALL(aclrtReserveMemAddress(&va_, size_, 0, nullptr, 0));
        wake();
    }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;
    ~Region() {
        if (handle_ != nullptr) {
            aclrtUnmapMem(va_);
            aclrtFreePhysical(handle_);
        }
        aclrtReleaseMemAddress(va_);
    }

    void *data() const { return va_; }

    // Copies the contents out, then drops the physical memory.
    std::vector<unsigned char> sleep() {
        std::vector<unsigned char> backup(size_);
        ACL_CALL(aclrtMemcpy(backup.data(), backup.size(), va_, size_,
                             ACL_MEMCPY_DEVICE_TO_HOST));
        ACL_CALL(aclrtUnmapMem(va_));
        ACL_CALL(aclrtFreePhysical(handle_));
        handle_ = nullptr;
        return backup;
    }

    // Re-takes physical memory at the same address, restoring `backup`.
    void wake(const std::vector<unsigned char> *backup = nullptr) {
        ACL_CALL(aclrtMallocPhysical(&handle_, size_, &prop_, 0));
        ACL_CALL(aclrtMapMem(va_, size_, 0, handle_, 0));
        if (backup != nullptr) {
            ACL_CALL(aclrtMemcpy(va_, size_, backup->data(), backup->size(),
                                 ACL_MEMCPY_HOST_TO_DEVICE));
        }
    }

  private:
    size_t size_;
    aclrtPhysicalMemProp prop_{};
    void *va_ = nullptr;
    aclrtDrvMemHandle handle_ = nullptr;
};

}  // namespace

int main() {
    try {
        ACL_CALL(aclInit(nullptr));
        ACL_CALL(aclrtSetDevice(0));
        const size_t size = size_t{32} << 20;
        const size_t before = hbm_free();
        {
            Region region(size);
            std::vector<unsigned char> pattern(size);
            for (size_t i = 0; i < size; i++) {
                pattern[i] = static_cast<unsigned char>(i ^ (i >> 9));
            }
            ACL_CALL(aclrtMemcpy(region.data(), size, pattern.data(), size,
                                 ACL_MEMCPY_HOST_TO_DEVICE));
            void *address = region.data();
            const size_t awake = hbm_free();

            std::vector<unsigned char> backup = region.sleep();
            const size_t asleep = hbm_free();
            std::printf("HBM free: %zu MiB before, %zu MiB awake, %zu MiB asleep\n",
                        before >> 20, awake >> 20, asleep >> 20);
            if (before - awake != size || asleep != before) {
                throw std::runtime_error("the memory was not released while asleep");
            }

            region.wake(&backup);
            if (region.data() != address || hbm_free() != awake) {
                throw std::runtime_error("woke at another address or size");
            }
            std::vector<unsigned char> seen(size);
            ACL_CALL(aclrtMemcpy(seen.data(), size, region.data(), size,
                                 ACL_MEMCPY_DEVICE_TO_HOST));
            if (seen != pattern) {
                throw std::runtime_error("the data did not survive sleep and wake");
            }
            std::printf("data intact after sleep and wake at %p\n", address);
        }
        if (hbm_free() != before) {
            throw std::runtime_error("memory leaked");
        }
        ACL_CALL(aclrtResetDevice(0));
        ACL_CALL(aclFinalize());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "FAILED: %s\n", e.what());
        return 1;
    }
    std::printf("PASSED\n");
    return 0;
}
