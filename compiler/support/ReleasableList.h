//===- ReleasableList.h - A list its consumer frees as it reads it ---------===//
//
// A flat file's stage declarations are its longest list (a million of them,
// a quarter of a gigabyte), and semantic analysis turns them, one by one,
// into the program's stages: holding both lists whole at once sets the peak
// of `pipec check`. This list is held in chunks of a fixed number of items,
// written at the end as a vector is, and `releaseBefore(n)` frees every
// whole chunk below item n, so that memory goes back while the consumer
// builds its own list beside it. Chunks past the first are whole from the
// start: growing copies nothing.
//
// Each chunk is pages mapped for it alone (mmap), not the allocator's: a
// freed chunk in the middle of malloc's heap stays resident, and glibc
// serves blocks of this size from that heap once its threshold for mapping
// has risen (it does after the first large block is freed), so a list
// released into it would cost as much as one kept.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_RELEASABLELIST_H
#define PIPEC_SUPPORT_RELEASABLELIST_H

#include <cassert>
#include <cstddef>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/mman.h>

namespace pipec {

/// An allocator whose every block of 64 KiB or more is pages of its own,
/// returned to the system when freed; smaller ones are the heap's.
template <typename T> struct MappedAllocator {
  using value_type = T;
  static constexpr size_t kMapped = size_t(64) << 10;
  MappedAllocator() = default;
  template <typename U> MappedAllocator(const MappedAllocator<U> &) {}
  T *allocate(size_t n) {
    if (n * sizeof(T) < kMapped)
      return static_cast<T *>(::operator new(n * sizeof(T)));
    void *p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t n) {
    if (n * sizeof(T) < kMapped)
      ::operator delete(p);
    else
      munmap(p, n * sizeof(T));
  }
  template <typename U> bool operator==(const MappedAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const MappedAllocator<U> &) const { return false; }
};

template <typename T, size_t ChunkItems = 1024> class ReleasableList {
  template <typename List, typename Ref> class Iter {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::remove_reference_t<Ref> *;
    using reference = Ref;
    Iter(List *list, size_t i) : list(list), i(i) {}
    Ref operator*() const { return (*list)[i]; }
    pointer operator->() const { return &(*list)[i]; }
    Iter &operator++() {
      ++i;
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++i;
      return old;
    }
    bool operator==(const Iter &o) const { return i == o.i; }
    bool operator!=(const Iter &o) const { return i != o.i; }

  private:
    List *list;
    size_t i;
  };

  static_assert((ChunkItems & (ChunkItems - 1)) == 0, "doubling must reach ChunkItems");
  static constexpr size_t kFirstItems = ChunkItems < 8 ? ChunkItems : 8;

public:
  using value_type = T;
  using iterator = Iter<ReleasableList, T &>;
  using const_iterator = Iter<const ReleasableList, const T &>;

  size_t size() const { return count; }
  bool empty() const { return count == 0; }

  T &operator[](size_t i) {
    assert(i < count && i >= released && "item out of range or released");
    return chunks[i / ChunkItems][i % ChunkItems];
  }
  const T &operator[](size_t i) const {
    assert(i < count && i >= released && "item out of range or released");
    return chunks[i / ChunkItems][i % ChunkItems];
  }
  T &back() { return (*this)[count - 1]; }
  const T &back() const { return (*this)[count - 1]; }

  void push_back(T &&item) {
    if (count % ChunkItems == 0) {
      // The first chunk grows as a vector does (a pipeline of a few stages
      // holds a few); the others are whole from the start, and never move.
      chunks.emplace_back();
      chunks.back().reserve(chunks.size() == 1 ? kFirstItems : ChunkItems);
    }
    chunks.back().push_back(std::move(item));
    ++count;
  }

  /// Frees every whole chunk of items [0, n); the items of a chunk that
  /// reaches n or past stay readable. Items below the first kept chunk may
  /// no longer be read. The size is unchanged.
  void releaseBefore(size_t n) {
    if (n > count)
      n = count;
    for (size_t c = released / ChunkItems; c < n / ChunkItems; ++c)
      Chunk().swap(chunks[c]);
    if (n / ChunkItems * ChunkItems > released)
      released = n / ChunkItems * ChunkItems;
  }
  /// Frees every item; the list is empty afterwards.
  void clear() {
    std::vector<Chunk>().swap(chunks);
    count = 0;
    released = 0;
  }

  /// Iteration starts at the first item not released.
  iterator begin() { return {this, released}; }
  iterator end() { return {this, count}; }
  const_iterator begin() const { return {this, released}; }
  const_iterator end() const { return {this, count}; }

private:
  using Chunk = std::vector<T, MappedAllocator<T>>;
  std::vector<Chunk> chunks;
  size_t count = 0;
  size_t released = 0; ///< items below it are freed (a multiple of ChunkItems)
};

} // namespace pipec

#endif // PIPEC_SUPPORT_RELEASABLELIST_H
