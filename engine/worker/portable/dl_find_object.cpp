// Only in the portable podium-worker (PODIUM_WORKER_PORTABLE), which links against glibc 2.31.
// The static libgcc unwinder of GCC 12 on Debian 12 looks up the unwind tables of the code it
// walks through with _dl_find_object, which glibc has only since 2.35: every C++ throw would need
// it. This one answers the same question from dl_iterate_phdr (glibc 2.2.4), as libgcc itself
// did before 2.35. Linked into the executable, it comes before libc, so on a newer glibc the
// agent still uses this definition.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>

namespace {

struct Search {
  std::uintptr_t address;
  dl_find_object* result;
  bool found;
};

// Called for each loaded object (the executable, libc, the loader, the vDSO) until one returns
// non-zero: fills the result when `address` lies in one of this object's loaded segments.
int find_in_object(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<Search*>(data);
  std::uintptr_t start = UINTPTR_MAX;
  std::uintptr_t end = 0;
  bool contains = false;
  void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD) {
      const std::uintptr_t limit = begin + segment.p_memsz;
      start = begin < start ? begin : start;
      end = limit > end ? limit : end;
      contains = contains || (search->address >= begin && search->address < limit);
    } else if (segment.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(begin);
    }
  }
  if (!contains) {
    return 0;
  }
  // An object without .eh_frame_hdr has nothing the unwinder can use: "not found", as libgcc
  // treats a null dlfo_eh_frame.
  search->found = eh_frame != nullptr;
  search->result->dlfo_flags = 0;
  search->result->dlfo_map_start = reinterpret_cast<void*>(start);
  search->result->dlfo_map_end = reinterpret_cast<void*>(end);
  search->result->dlfo_link_map = nullptr;  // libgcc reads only the unwind table
  search->result->dlfo_eh_frame = eh_frame;
  return 1;
}

}  // namespace

extern "C" int _dl_find_object(void* address, dl_find_object* result) noexcept {
  Search search{reinterpret_cast<std::uintptr_t>(address), result, false};
  dl_iterate_phdr(find_in_object, &search);
  return search.found ? 0 : -1;
}
