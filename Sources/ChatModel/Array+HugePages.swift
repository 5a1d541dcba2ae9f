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
        #if os(Linux)
        let bytes = self.capacity * MemoryLayout<Element>.stride
        let hugePage = 2 << 20
        guard bytes >= 2 * hugePage else { return }
        withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let start = (Int(bitPattern: base) + hugePage - 1) & ~(hugePage - 1)
            let end = (Int(bitPattern: base) + bytes) & ~(hugePage - 1)
            guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
            _ = madvise(pointer, end - start, MADV_HUGEPAGE)
        }
        #endif
    }
}
