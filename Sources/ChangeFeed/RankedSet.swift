/// A sorted set with order statistics: the rank of any value and the element at any rank, both in
/// O(log n), with inserts and removals in O(log n) comparisons plus a short, cache-friendly shift.
///
/// The feed engine keeps every chat's `ChatOrderKey` in one of these: `rank(of:)` is a chat's row
/// index in the chat list, `element(at:)` the chat at a row, and `elements(from:count:)` a window.
///
/// ## Design
/// A two-level blocked sorted array (the layout of Python's `sortedcontainers.SortedList`):
/// - `blocks`: blocks of about `blockSize` elements each (256 by default), every element of
///   block `i` less than every element of block `i + 1`; no block is empty. Each block is stored
///   greatest first (descending), so that the least elements — the top of a chat list, where a
///   chat with a new message goes, and where the chats that get messages are — are at the end of
///   the first block's buffer. A block (`RankedSetBlock`) has room at both ends and moves the
///   shorter side on an insert or a removal: the bottom of the list, the last block's first
///   element, comes and goes as cheaply as the top.
/// - `maxes`: the greatest element of each block (its first), so that finding a value's block is a
///   binary search over one contiguous array instead of one cache miss per block visited.
/// - `sizes`: the size of each block, so that rebuilding the tree reads one contiguous array
///   instead of visiting every block's buffer.
/// - `tree`: a Fenwick (binary indexed) tree over the block sizes, giving the number of elements
///   before a block, and the block holding a rank, in O(log B) for B blocks.
///
/// A block that grows past `2 × blockSize` is split in two; a block that shrinks under
/// `blockSize / 2` is merged with a neighbour (and the result split again if too large); an empty
/// block is removed. Splits and merges rebuild the Fenwick tree in O(B), which happens at most once
/// every `blockSize / 2` mutations, so it costs O(1) amortized per operation (B is about 4,000 for
/// 1,000,000 elements). Splits and merges move elements, they never copy them (no retain or
/// release of an element that holds a reference). There are no per-element allocations.
///
/// ## Ordering
/// Only `<` is used: two elements are the same element when neither is less than the other. The
/// element type's `==` is never called, so a type whose `==` is coarser or finer than its `<`
/// (`String` compares by canonical equivalence, `ChatOrderKey.<` compares ids bytewise) still gets
/// the order of `<`. `<` must be a strict total order.
///
/// ## Value semantics
/// `RankedSet` is a struct of standard arrays and of blocks it copies before mutating one that is
/// shared (`isKnownUniquelyReferenced`), so it has value semantics with copy-on-write: copying a
/// set is O(1), and the first mutation of a shared copy copies the outer arrays (O(B)) and then
/// each block it touches (O(blockSize)). Keep a single owner (the feed engine) to stay on the
/// fast, in-place path.
///
/// Not thread-safe for concurrent mutation (like any value); it is `Sendable` when its elements are.
public struct RankedSet<Element: Comparable> {
    /// Non-empty blocks, each in descending order; block `i` holds ranks before block `i + 1`'s.
    @usableFromInline var blocks: [RankedSetBlock<Element>]
    /// `maxes[i] == blocks[i][0]`, the greatest element of block `i`.
    @usableFromInline var maxes: [Element]
    /// `sizes[i] == blocks[i].count`.
    @usableFromInline var sizes: [Int]
    /// Fenwick tree over `sizes`, 1-based: `tree.count == blocks.count + 1`.
    @usableFromInline var tree: [Int]
    /// The number of elements.
    @usableFromInline var _count: Int
    /// The load factor: blocks are split above `2 * blockSize` and merged below `blockSize / 2`.
    @usableFromInline let blockSize: Int

    /// The default load factor, tuned for elements of a few dozen bytes such as `ChatOrderKey`.
    public static var defaultBlockSize: Int { 256 }

    /// An empty set.
    ///
    /// - Complexity: O(1).
    @inlinable
    public init() {
        self.init(_blockSize: Self.defaultBlockSize)
    }

    /// An empty set with the given load factor (at least 4). Smaller blocks make splits and
    /// merges frequent; only tests and benchmarks have a reason to choose it.
    ///
    /// - Complexity: O(1).
    @_spi(Testing)
    @inlinable
    public init(blockSize: Int) {
        self.init(_blockSize: blockSize)
    }

    @inlinable
    init(_blockSize blockSize: Int) {
        precondition(blockSize >= 4, "RankedSet: blockSize must be at least 4")
        self.blocks = []
        self.maxes = []
        self.sizes = []
        self.tree = [0]
        self._count = 0
        self.blockSize = blockSize
    }

    /// A set holding the elements of `sorted`, which must be strictly increasing (sorted by `<`
    /// and free of duplicates); this is checked, and a violation stops the program.
    ///
    /// Loading 1,000,000 elements fills ~3,900 blocks exactly to the load factor: one allocation
    /// per block, no comparisons besides the order check, no rebalancing.
    ///
    /// - Complexity: O(n).
    @inlinable
    public init(sorted: some Sequence<Element>) {
        self.init(_sorted: sorted, blockSize: Self.defaultBlockSize)
    }

    /// `init(sorted:)` with the given load factor (see `init(blockSize:)`).
    ///
    /// - Complexity: O(n).
    @_spi(Testing)
    @inlinable
    public init(sorted: some Sequence<Element>, blockSize: Int) {
        self.init(_sorted: sorted, blockSize: blockSize)
    }

    @inlinable
    init(_sorted sorted: some Sequence<Element>, blockSize: Int) {
        self.init(_blockSize: blockSize)
        let estimate = sorted.underestimatedCount
        if estimate > 0 {
            let blockCount = (estimate + blockSize - 1) / blockSize
            blocks.reserveCapacity(blockCount)
            maxes.reserveCapacity(blockCount)
        }
        var elements = sorted.makeIterator()
        var previous: Element? = nil
        // The elements the estimate still promises: a block that holds the last of them is
        // allocated to their number, not to the load factor (a list of 10 chats takes 10 slots
        // per view, not 256: most of a user's live index at gateway sizes).
        var promised = estimate
        while true {
            let capacity = promised > 0 && promised < blockSize ? promised : blockSize
            // Each block is filled from its end, greatest last in, so that it is in descending
            // order without a second pass; a short last block has its room at the front.
            let block = RankedSetBlock<Element>.make(capacity: capacity, start: capacity)
            block.withUnsafeMutablePointers { header, base in
                var free = capacity
                while free > 0, let element = elements.next() {
                    if let previous {
                        precondition(previous < element, "RankedSet(sorted:): elements must be strictly increasing")
                    }
                    previous = element
                    free -= 1
                    (base + free).initialize(to: element)
                }
                header.pointee.start = free
                header.pointee.count = capacity - free
            }
            promised = Swift.max(promised - block.count, 0)
            guard block.count > 0 else { break }
            maxes.append(block[0])
            blocks.append(block)
            // A full block of the load factor, or of the promised rest (more may follow when the
            // estimate was short), goes on; a block that found fewer is the last.
            if block.count < capacity { break }
        }
        sizes = blocks.map(\.count)
        _count = sizes.reduce(0, +)
        rebuildTree()
    }

    /// A set of the elements of `sorted`, moved out of it: the buffer is left uninitialized (its
    /// owner deallocates it without deinitializing). The elements must be strictly increasing;
    /// the caller guarantees it (checked only in debug builds).
    ///
    /// `init(sorted:)` copies each element into its block and the caller then destroys its own:
    /// for elements that hold a reference (a chat id longer than 15 bytes), a retain and a release
    /// of each, a fifth of a load of 1,000,000 chats. Moving them costs neither.
    ///
    /// - Complexity: O(n).
    @_spi(Testing)
    @inlinable
    public init(movingSorted sorted: UnsafeMutableBufferPointer<Element>, blockSize: Int = Self.defaultBlockSize) {
        self.init(_blockSize: blockSize)
        assert(zip(sorted, sorted.dropFirst()).allSatisfy { $0 < $1 }, "RankedSet(movingSorted:): elements must be strictly increasing")
        guard let source = sorted.baseAddress, !sorted.isEmpty else { return }
        let blockCount = (sorted.count + blockSize - 1) / blockSize
        blocks.reserveCapacity(blockCount)
        maxes.reserveCapacity(blockCount)
        var next = 0
        while next < sorted.count {
            let capacity = Swift.min(blockSize, sorted.count - next)
            // Descending in the block, like `init(sorted:)`: the greatest at the block's start.
            let block = RankedSetBlock<Element>.make(capacity: capacity, start: 0)
            block.withUnsafeMutablePointers { header, base in
                for offset in 0..<capacity {
                    (base + capacity - 1 - offset).initialize(to: (source + next + offset).move())
                }
                header.pointee.count = capacity
            }
            next += capacity
            maxes.append(block[0])
            blocks.append(block)
        }
        sizes = blocks.map(\.count)
        _count = sorted.count
        rebuildTree()
    }

    // MARK: - Size

    /// The number of elements.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var count: Int { _count }

    /// Whether the set is empty.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool { _count == 0 }

    /// The least element (rank 0), or nil when the set is empty.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var first: Element? { blocks.first.map { $0[$0.count - 1] } }

    /// The greatest element (rank `count - 1`), or nil when the set is empty.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var last: Element? { maxes.last }

    // MARK: - Queries

    /// Whether `element` is in the set (neither less nor greater than a member).
    ///
    /// - Complexity: O(log n) comparisons.
    @inlinable
    public func contains(_ element: Element) -> Bool {
        let b = blockIndex(for: element)
        if b == blocks.count { return false }
        return blocks[b].withElements { block in
            // The least element not less than `element`; there is one because maxes[b] >= element.
            !(element < block[block.count - 1 - Self.lessCount(block, element)])
        }
    }

    /// The number of elements strictly less than `element`; `element` need not be in the set.
    /// For a member, this is its position in sorted order (its row index in the chat list).
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func rank(of element: Element) -> Int {
        let b = blockIndex(for: element)
        if b == blocks.count { return _count }
        let inBlock = blocks[b].withElements { Self.lessCount($0, element) }
        return prefixCount(blocks: b) + inBlock
    }

    /// The element at `rank` in sorted order; `rank` must be in `0..<count`.
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func element(at rank: Int) -> Element {
        precondition(rank >= 0 && rank < _count, "RankedSet.element(at:): rank out of range")
        let (b, offset) = locate(rank)
        return blocks[b][sizes[b] - 1 - offset]
    }

    /// Up to `count` elements in sorted order starting at `rank` (fewer when the set ends first):
    /// a window snapshot such as the top 50, or a few elements around a window boundary.
    /// `rank` must be in `0...self.count` and `count` non-negative.
    ///
    /// - Complexity: O(log n + k) for the k elements returned.
    @inlinable
    public func elements(from rank: Int, count: Int) -> [Element] {
        precondition(rank >= 0 && rank <= _count, "RankedSet.elements(from:count:): rank out of range")
        precondition(count >= 0, "RankedSet.elements(from:count:): negative count")
        let wanted = Swift.min(count, _count - rank)
        if wanted == 0 { return [] }
        var result: [Element] = []
        result.reserveCapacity(wanted)
        var (b, offset) = locate(rank)
        while result.count < wanted {
            blocks[b].withElements { block in
                let take = Swift.min(block.count - offset, wanted - result.count)
                // Ranks offset ..< offset + take of the block, stored in descending order.
                result.append(contentsOf: block[(block.count - offset - take)..<(block.count - offset)].reversed())
            }
            b += 1
            offset = 0
        }
        return result
    }

    /// The elements from `rank` to the end, in sorted order, lazily: nothing is copied until
    /// iterated. `rank` must be in `0...count`. The sequence iterates the set as it was when this
    /// was called, whatever happens to the set afterwards.
    ///
    /// - Complexity: O(log n) to start, then O(1) per element.
    @inlinable
    public func elements(from rank: Int) -> Elements {
        precondition(rank >= 0 && rank <= _count, "RankedSet.elements(from:): rank out of range")
        if rank == _count { return Elements(blocks: blocks, block: blocks.count, offset: 0) }
        let (b, offset) = locate(rank)
        return Elements(blocks: blocks, block: b, offset: offset)
    }

    // MARK: - Mutations

    /// Inserts `element`; returns false (and changes nothing) when it is already present.
    ///
    /// - Complexity: O(log n) comparisons plus a shift of at most `2 × blockSize` elements within
    ///   one block; O(log n) amortized overall (an occasional split costs O(blockSize + B)).
    @inlinable
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        insertReportingRank(element) != nil
    }

    /// Inserts `element` and returns its rank in the set after the insert; returns nil (and
    /// changes nothing) when it is already present. The rank comes from the search the insert
    /// makes anyway: a caller that needs it saves a `rank(of:)`.
    ///
    /// - Complexity: as `insert(_:)`.
    @inlinable
    @discardableResult
    public mutating func insertReportingRank(_ element: Element) -> Int? {
        if blocks.isEmpty {
            let block = RankedSetBlock<Element>.make(capacity: blockSize, start: 0)
            block.insert(element, at: 0)
            blocks.append(block)
            maxes.append(element)
            sizes.append(1)
            _count = 1
            rebuildTree()
            return 0
        }
        var b = blockIndex(for: element)
        let rank: Int
        if b == blocks.count {
            // Greater than everything: the front of the last block.
            rank = _count
            b -= 1
            prepareForInsert(b).insert(element, at: 0)
            maxes[b] = element
        } else {
            // The elements less than `element` are the block's last `less`; it goes before them,
            // unless the one before them is `element` (maxes[b] is not less than it).
            let (less, present) = blocks[b].withElements { block in
                let less = Self.lessCount(block, element)
                return (less, !(element < block[block.count - 1 - less]))
            }
            if present { return nil }
            rank = prefixCount(blocks: b) + less
            prepareForInsert(b).insert(element, at: sizes[b] - less)
        }
        _count += 1
        sizes[b] += 1
        if sizes[b] > 2 * blockSize {
            split(b)
        } else {
            treeAdd(b, 1)
        }
        return rank
    }

    /// Removes `element`; returns false (and changes nothing) when it is not present.
    ///
    /// - Complexity: O(log n) comparisons plus a shift of at most `2 × blockSize` elements within
    ///   one block; O(log n) amortized overall (an occasional merge costs O(blockSize + B)).
    @inlinable
    @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        removeReportingRank(element) != nil
    }

    /// Removes `element` and returns the rank it had; returns nil (and changes nothing) when it
    /// is not present. The rank comes from the search the removal makes anyway.
    ///
    /// - Complexity: as `remove(_:)`.
    @inlinable
    @discardableResult
    public mutating func removeReportingRank(_ element: Element) -> Int? {
        let b = blockIndex(for: element)
        if b == blocks.count { return nil }
        // The least element not less than `element` is the one before the block's last `less`.
        let (less, present) = blocks[b].withElements { block in
            let less = Self.lessCount(block, element)
            return (less, !(element < block[block.count - 1 - less]))
        }
        if !present { return nil }
        let rank = prefixCount(blocks: b) + less
        removeElement(block: b, at: sizes[b] - 1 - less)
        return rank
    }

    /// Removes and returns the element at `rank`, which must be in `0..<count`.
    ///
    /// - Complexity: as `remove(_:)`, without comparisons.
    @inlinable
    @discardableResult
    public mutating func remove(at rank: Int) -> Element {
        precondition(rank >= 0 && rank < _count, "RankedSet.remove(at:): rank out of range")
        let (b, offset) = locate(rank)
        return removeElement(block: b, at: sizes[b] - 1 - offset)
    }

    /// Removes every element.
    ///
    /// - Complexity: O(n) to release the elements.
    @inlinable
    public mutating func removeAll() {
        blocks = []
        maxes = []
        sizes = []
        tree = [0]
        _count = 0
    }

    // MARK: - Internals

    /// Removes and returns `blocks[b][i]` (`i` an index in the block, not a rank) and rebalances.
    @inlinable
    @discardableResult
    mutating func removeElement(block b: Int, at i: Int) -> Element {
        let block = makeUnique(b)
        let removed = block.remove(at: i)
        _count -= 1
        sizes[b] -= 1
        let remaining = sizes[b]
        if remaining == 0 {
            _ = consume block
            blocks.remove(at: b)
            maxes.remove(at: b)
            sizes.remove(at: b)
            rebuildTree()
            return removed
        }
        if i == 0 {
            maxes[b] = block[0]
        }
        _ = consume block  // a merge moves the elements of a block only this set holds
        if remaining < blockSize / 2 && blocks.count > 1 {
            merge(b)
        } else {
            treeAdd(b, -1)
        }
        return removed
    }

    /// The index of the first block whose greatest element is not less than `element`, or
    /// `blocks.count` when `element` is greater than every element.
    @inlinable
    func blockIndex(for element: Element) -> Int {
        maxes.withUnsafeBufferPointer { Self.lowerBound($0, element) }
    }

    /// The number of elements of `buffer`, a block in descending order, that are less than
    /// `element`: they are its last ones.
    @inlinable
    static func lessCount(_ buffer: UnsafeBufferPointer<Element>, _ element: Element) -> Int {
        buffer.count - partitionPoint(buffer) { !($0 < element) }
    }

    /// The index of the first element of `buffer`, in ascending order, that is not less than `element`.
    @inlinable
    static func lowerBound(_ buffer: UnsafeBufferPointer<Element>, _ element: Element) -> Int {
        partitionPoint(buffer) { $0 < element }
    }

    /// The first index of `buffer` whose element is not `inPrefix`, where `inPrefix` holds for a
    /// prefix of `buffer` and for no element after it. O(log n) calls of `inPrefix`.
    @inlinable
    static func partitionPoint(_ buffer: UnsafeBufferPointer<Element>, _ inPrefix: (Element) -> Bool) -> Int {
        var low = 0
        var size = buffer.count
        while size > 0 {
            let half = size / 2
            let middle = low + half
            if inPrefix(buffer[middle]) {
                low = middle + 1
                size -= half + 1
            } else {
                size = half
            }
        }
        return low
    }

    /// Makes block `b` this set's own before a mutation (a copy when another set shares it),
    /// and returns it.
    @inlinable
    mutating func makeUnique(_ b: Int) -> RankedSetBlock<Element> {
        if !isKnownUniquelyReferenced(&blocks[b]) { blocks[b] = blocks[b].copy() }
        return blocks[b]
    }

    /// Makes block `b` this set's own with a free slot, and returns it: when it is full it moves
    /// to a buffer twice as large, never past `2 × blockSize + 1` slots (the most a block holds
    /// before it is split), so a block's buffer stays within 2 × its largest possible contents.
    @inlinable
    mutating func prepareForInsert(_ b: Int) -> RankedSetBlock<Element> {
        let isUnique = isKnownUniquelyReferenced(&blocks[b])
        let block = blocks[b]
        if block.count == block.slots {
            blocks[b] = block.resized(to: Swift.min(Swift.max(2 * block.slots, 16), 2 * blockSize + 1), isUnique: isUnique)
        } else if !isUnique {
            blocks[b] = block.copy()
        }
        return blocks[b]
    }

    /// Splits the oversized block `b` (this set's own) in two: its lower half moves to a new
    /// block with room for `blockSize / 2` inserts, its upper half stays. The first block's lower
    /// half — the top of a chat list, where every chat with a new message goes — gets a block of
    /// the most slots a block has, the room all after its least element: it takes every insert
    /// until the next split without moving its elements (with room at both ends it ran out of
    /// room at that end after `blockSize / 4` inserts, and moved the whole block several times
    /// before it split).
    @inlinable
    mutating func split(_ b: Int) {
        let count = blocks[b].count
        let half = count / 2
        let room = blockSize / 2
        // The lower ranks are the block's last `half` elements.
        let lower = RankedSetBlock.gathering(
            [(blocks[b], (count - half)..<count, true)],
            capacity: b == 0 ? 2 * blockSize + 1 : half + room, start: b == 0 ? 0 : room / 2)
        let upperMax = maxes[b]
        maxes[b] = lower[0]
        blocks.insert(lower, at: b)
        maxes.insert(upperMax, at: b + 1)
        sizes[b] = half
        sizes.insert(count - half, at: b + 1)
        rebuildTree()
    }

    /// Merges the undersized block `b` with a neighbour into a new block sized to their elements,
    /// or into two new blocks with room for `blockSize / 2` inserts each when they are more than
    /// `2 × blockSize`.
    @inlinable
    mutating func merge(_ b: Int) {
        // Merge the pair (left, left + 1); descending, so the greater block's elements come first.
        let left = b > 0 ? b - 1 : b
        let lesserIsUnique = isKnownUniquelyReferenced(&blocks[left])
        let greaterIsUnique = isKnownUniquelyReferenced(&blocks[left + 1])
        let greaterMax = maxes.remove(at: left + 1)
        let greaterCount = sizes.remove(at: left + 1)
        let total = sizes[left] + greaterCount
        let merged = RankedSetBlock.gathering(
            [(blocks[left + 1], 0..<greaterCount, greaterIsUnique), (blocks[left], 0..<sizes[left], lesserIsUnique)],
            capacity: total, start: 0)  // exactly, not doubled
        blocks.remove(at: left + 1)
        if total <= 2 * blockSize {
            blocks[left] = merged
            maxes[left] = greaterMax
            sizes[left] = total
        } else {
            let room = blockSize / 2
            let half = total / 2
            // The lower ranks are the merged block's last `half` elements.
            let lower = RankedSetBlock.gathering([(merged, (total - half)..<total, true)], capacity: half + room, start: room / 2)
            let upper = RankedSetBlock.gathering([(merged, 0..<(total - half), true)], capacity: total - half + room, start: room / 2)
            blocks[left] = lower
            blocks.insert(upper, at: left + 1)
            maxes[left] = lower[0]
            maxes.insert(greaterMax, at: left + 1)
            sizes[left] = half
            sizes.insert(total - half, at: left + 1)
        }
        rebuildTree()
    }

    /// Rebuilds the Fenwick tree from `sizes`.
    ///
    /// - Complexity: O(B).
    @inlinable
    mutating func rebuildTree() {
        let n = blocks.count
        // Resized in place, not replaced: a split or a merge changes the count by one, and a new
        // array each time (4 KiB per 500 blocks) faulted fresh pages in once the allocator had
        // given the old ones back.
        if tree.count > n + 1 {
            tree.removeLast(tree.count - (n + 1))
        } else if tree.count < n + 1 {
            tree.append(contentsOf: repeatElement(0, count: n + 1 - tree.count))
        }
        tree.withUnsafeMutableBufferPointer { t in t.update(repeating: 0) }
        guard n > 0 else { return }
        sizes.withUnsafeBufferPointer { sizes in
            tree.withUnsafeMutableBufferPointer { t in
                for i in 1...n {
                    t[i] += sizes[i - 1]
                    let parent = i + (i & -i)
                    if parent <= n { t[parent] += t[i] }
                }
            }
        }
    }

    /// Adds `delta` to the size recorded for block `b`.
    @inlinable
    mutating func treeAdd(_ b: Int, _ delta: Int) {
        tree.withUnsafeMutableBufferPointer { t in
            let n = t.count - 1
            var i = b + 1
            while i <= n {
                t[i] += delta
                i += i & -i
            }
        }
    }

    /// The number of elements in `blocks[0..<b]`.
    @inlinable
    func prefixCount(blocks b: Int) -> Int {
        tree.withUnsafeBufferPointer { t in
            var sum = 0
            var i = b
            while i > 0 {
                sum += t[i]
                i -= i & -i
            }
            return sum
        }
    }

    /// The block holding `rank` (in `0..<count`) and the offset of that rank in it.
    @inlinable
    func locate(_ rank: Int) -> (block: Int, offset: Int) {
        tree.withUnsafeBufferPointer { t in
            let n = t.count - 1
            var position = 0
            var remaining = rank
            var step = n == 0 ? 0 : 1 << (Int.bitWidth - 1 - n.leadingZeroBitCount)
            while step > 0 {
                let next = position + step
                if next <= n && t[next] <= remaining {
                    position = next
                    remaining -= t[next]
                }
                step >>= 1
            }
            return (position, remaining)
        }
    }
}

// MARK: - Iteration

extension RankedSet: Sequence {
    /// Iterates the elements from a rank to the end, in order. It holds the blocks as they were
    /// when it was made (a copy-on-write snapshot): while one is alive, the set's next mutation
    /// copies the outer arrays (O(B)) and the block it touches, so iterate and drop it rather
    /// than keep it across mutations.
    public struct Elements: Sequence, IteratorProtocol {
        @usableFromInline let blocks: [RankedSetBlock<Element>]
        @usableFromInline var block: Int
        @usableFromInline var offset: Int

        @inlinable
        init(blocks: [RankedSetBlock<Element>], block: Int, offset: Int) {
            self.blocks = blocks
            self.block = block
            self.offset = offset
        }

        @inlinable
        public mutating func next() -> Element? {
            guard block < blocks.count else { return nil }
            let current = blocks[block]
            let element = current[current.count - 1 - offset]
            offset += 1
            if offset == current.count {
                block += 1
                offset = 0
            }
            return element
        }
    }

    /// Iterates every element in sorted order.
    ///
    /// - Complexity: O(1) to start, O(1) per element.
    @inlinable
    public func makeIterator() -> Elements {
        Elements(blocks: blocks, block: 0, offset: 0)
    }

    @inlinable
    public var underestimatedCount: Int { _count }
}

// A block is mutated only by the one set that holds it (a shared block is copied first), so a set
// and its snapshots may cross threads as their elements may.
extension RankedSet: @unchecked Sendable where Element: Sendable {}
extension RankedSet.Elements: @unchecked Sendable where Element: Sendable {}

extension RankedSet: CustomStringConvertible {
    public var description: String {
        "RankedSet(\(Array(self)))"
    }
}

// MARK: - Testing

extension RankedSet {
    /// Every structural invariant that does not hold (empty when the set is sound). For tests.
    ///
    /// - Complexity: O(n).
    @_spi(Testing)
    public func invariantViolations() -> [String] {
        var problems: [String] = []
        if blocks.count != maxes.count { problems.append("maxes out of step with blocks") }
        if tree.count != blocks.count + 1 { problems.append("tree out of step with blocks") }
        if sizes != blocks.map(\.count) { problems.append("sizes out of step with blocks") }
        if !problems.isEmpty { return problems }
        var total = 0
        var previous: Element? = nil
        for (b, block) in blocks.enumerated() {
            let elements = block.array
            guard let greatest = elements.first else {
                problems.append("empty block \(b)")
                continue
            }
            if block.count > 2 * blockSize { problems.append("oversized block \(b): \(block.count)") }
            if greatest < maxes[b] || maxes[b] < greatest { problems.append("stale max of block \(b)") }
            for element in elements.reversed() {
                if let previous, !(previous < element) {
                    problems.append("not strictly increasing in block \(b)")
                }
                previous = element
            }
            if prefixCount(blocks: b) != total { problems.append("Fenwick prefix wrong at block \(b)") }
            total += block.count
        }
        if total != _count { problems.append("count \(_count) but \(total) elements") }
        if prefixCount(blocks: blocks.count) != total { problems.append("Fenwick total wrong") }
        return problems
    }

    /// The sizes of the blocks, for tests that check splits and merges happen.
    @_spi(Testing)
    public var blockSizes: [Int] { blocks.map(\.count) }

    /// The capacities of the blocks' buffers, for tests that check memory stays bounded.
    @_spi(Testing)
    public var blockCapacities: [Int] { blocks.map(\.slots) }
}
