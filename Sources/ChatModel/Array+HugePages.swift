#if canImport(Glibc)
import Glibc
#endif

extension Array {
    /// Reserves room for `capacity` elements and, on Linux, asks the kernel to back the
    /// reservation with huge pages (`madvise(MADV_HUGEPAGE)`, where transparent huge pages are
    /// `madvise` or `always`) before anything is written to it.
    ///
    /// For the arrays of a load of every chat (hundreds of megabytes at 1,000,000 chats): filling
    /// them page by page took one page fault per 4 KiB, a third of the store's scan; and a lookup
    /// at a random place then misses the TLB less. Elsewhere, or under a kernel that does not
    /// take the advice, it is `reserveCapacity`.
    public mutating func reserveCapacityInHugePages(_ capacity: Int) {
        reserveCapacity(capacity)
        let bytes = self.capacity * MemoryLayout<Element>.stride
        withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { adviseHugePages(UnsafeMutableRawPointer(base), bytes: bytes) }
        }
    }

    /// An array of `count` elements in memory backed by huge pages where the kernel takes the
    /// advice (as `reserveCapacityInHugePages`), all of which `initialize` initializes, in any
    /// order and from any thread it likes before it returns.
    public init(inHugePagesCount count: Int, initializingWith initialize: (UnsafeMutableBufferPointer<Element>) -> Void) {
        self.init(unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress {
                adviseHugePages(UnsafeMutableRawPointer(base), bytes: count * MemoryLayout<Element>.stride)
            }
            initialize(UnsafeMutableBufferPointer(rebasing: buffer[..<count]))
            initialized = count
        }
    }
}

/// Asks the kernel to back the whole huge pages of `bytes` bytes at `base` with huge pages
/// (Linux; nothing elsewhere, or for less than two huge pages).
private func adviseHugePages(_ base: UnsafeMutableRawPointer, bytes: Int) {
    #if os(Linux)
    let hugePage = 2 << 20
    guard bytes >= 2 * hugePage else { return }
    let start = (Int(bitPattern: base) + hugePage - 1) & ~(hugePage - 1)
    let end = (Int(bitPattern: base) + bytes) & ~(hugePage - 1)
    guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
    _ = madvise(pointer, end - start, MADV_HUGEPAGE)
    #endif
}
