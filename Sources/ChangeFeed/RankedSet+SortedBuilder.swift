extension RankedSet {
    /// Builds a set of `count` elements appended one by one in strictly increasing order, each
    /// made straight into its block, as `init(movingSorted:)` lays them out — without a buffer of
    /// them first. A load of 1,000,000 chats builds its views' sets in its one pass over the chats
    /// (`ChatIndex.init`): the buffers of their keys were 16,000 of a start-up's 40,000 page faults.
    ///
    /// An element not greater than the one before fails the builder for good (`finish()` is then
    /// nil): the caller sorts that view's elements instead. Every element appended is either in
    /// a block or destroyed, whatever happens.
    @_spi(Testing)
    public struct SortedBuilder {
        @usableFromInline var set: RankedSet
        /// The number of elements the set is to hold.
        @usableFromInline let total: Int
        /// The block being filled: its elements descending, the greatest made last at its start.
        @usableFromInline var block: RankedSetBlock<Element>?
        @usableFromInline var appended = 0
        @usableFromInline var failed = false

        @inlinable
        public init(count: Int, blockSize: Int = RankedSet.defaultBlockSize) {
            set = RankedSet(_blockSize: blockSize)
            total = count
            let blockCount = (count + blockSize - 1) / blockSize
            set.blocks.reserveCapacity(blockCount)
            set.maxes.reserveCapacity(blockCount)
        }

        /// Appends `element`, which must be greater than every element before it, and fewer than
        /// `count` may have come; false otherwise (the builder has then failed).
        ///
        /// - Complexity: O(1) amortized.
        @inlinable
        @discardableResult
        public mutating func append(_ element: consuming Element) -> Bool {
            guard !failed, appended < total else {
                failed = true
                return false
            }
            if block == nil || block!.count == block!.slots {
                if let full = block { close(full) }
                let capacity = Swift.min(set.blockSize, total - appended)
                block = RankedSetBlock<Element>.make(capacity: capacity, start: capacity)
            }
            let previousBlockMax = block!.count == 0 ? set.maxes.last : nil
            // (Moved into the block from here: a consuming parameter cannot be moved out of a closure.)
            var pending = Optional(element)
            let placed = block!.withUnsafeMutablePointers { header, base in
                let start = header.pointee.start
                // The element before: this block's last made, or the previous block's greatest.
                let greater = header.pointee.count > 0 ? base[start] < pending! : previousBlockMax.map { $0 < pending! } ?? true
                guard greater else { return false }
                (base + start - 1).initialize(to: pending.take()!)
                header.pointee.start = start - 1
                header.pointee.count += 1
                return true
            }
            guard placed else {
                failed = true
                return false
            }
            appended += 1
            return true
        }

        @inlinable
        mutating func close(_ full: RankedSetBlock<Element>) {
            set.maxes.append(full[0])
            set.blocks.append(full)
        }

        /// The set, nil when an append failed or fewer than `count` elements came. The builder is
        /// left spent and empty (its elements, on a failure, destroyed): the set returned holds
        /// the only references to its arrays and blocks, which its first mutations then need not
        /// copy. (Emptied field by field: an empty array allocates nothing, a new set's would.)
        @inlinable
        public mutating func finish() -> RankedSet? {
            defer {
                set.blocks = []
                set.maxes = []
                set.sizes = []
                set.tree = []
                block = nil
                failed = true
            }
            guard !failed, appended == total else { return nil }
            if let last = block { close(last) }
            set.sizes = set.blocks.map(\.count)
            set._count = total
            set.rebuildTree()
            return set
        }
    }
}
