/// Where a block's elements are in its buffer: `start ..< start + count` of `capacity` slots.
@usableFromInline
struct RankedSetBlockHeader {
    @usableFromInline var start: Int
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int

    @inlinable
    init(start: Int, count: Int, capacity: Int) {
        self.start = start
        self.count = count
        self.capacity = capacity
    }
}

/// One block of a `RankedSet`: its elements in descending order, contiguous in a buffer with
/// room at both ends (the layout of a deque that never wraps), so that an insert or a removal
/// moves the shorter side. With an `Array` a removal moves every element after it: removing a
/// block's greatest element — its first, the bottom of a chat list — moved the whole block.
///
/// Elements are only ever moved (`moveInitialize`, a `memmove` for most types), never copied:
/// a split or a merge retains and releases nothing. A block shared by two sets (after a copy of
/// the set) is copied before a mutation: `RankedSet` checks `isKnownUniquelyReferenced` first.
@usableFromInline
final class RankedSetBlock<Element>: ManagedBuffer<RankedSetBlockHeader, Element> {
    /// An empty block with room for `capacity` elements, the first to go at `start`.
    @inlinable
    static func make(capacity: Int, start: Int) -> RankedSetBlock {
        let buffer = create(minimumCapacity: capacity) { _ in
            RankedSetBlockHeader(start: start, count: 0, capacity: capacity)
        }
        return unsafeDowncast(buffer, to: RankedSetBlock.self)
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            _ = (elements + header.pointee.start).deinitialize(count: header.pointee.count)
        }
    }

    // The header is read through its pointer: `header` is a class's stored property, and each
    // read of it began and ended a dynamic exclusivity access.
    @inlinable
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// The slots the buffer has (not what the allocator rounded it up to).
    @inlinable
    var slots: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    @inlinable
    subscript(i: Int) -> Element {
        withUnsafeMutablePointers { header, elements in elements[header.pointee.start + i] }
    }

    /// Calls `body` with the elements (descending).
    @inlinable
    func withElements<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, elements in
            try body(UnsafeBufferPointer(start: elements + header.pointee.start, count: header.pointee.count))
        }
    }

    /// The elements, descending, in an array (for tests and descriptions).
    @inlinable
    var array: [Element] { withElements { Array($0) } }

    /// Inserts `element` at `i` (in `0...count`); there must be a free slot. Moves the elements
    /// before `i` one slot down or the ones from `i` one slot up, whichever are fewer. When the
    /// fewer have no free slot to go to, every element moves first, three quarters of the room
    /// (at least a slot) going to the side of `i` and the rest to the other: O(count) once, then
    /// cheap inserts on that side (a list's top) without making inserts that alternate between
    /// the ends move the whole block each time.
    @inlinable
    func insert(_ element: Element, at i: Int) {
        withUnsafeMutablePointers { header, elements in
            var start = header.pointee.start
            let count = header.pointee.count
            let capacity = header.pointee.capacity
            precondition(count < capacity, "RankedSetBlock.insert: full")
            let front = i < count - i
            if front ? start == 0 : start + count == capacity {
                // The side to move has no room: make most of the room there.
                let gap = capacity - count
                let toward = Swift.max(gap - gap / 4, 1)
                let newStart = front ? toward : gap - toward
                (elements + newStart).moveInitialize(from: elements + start, count: count)
                start = newStart
            }
            if front && start > 0 {
                (elements + start - 1).moveInitialize(from: elements + start, count: i)
                start -= 1
            } else {
                (elements + start + i + 1).moveInitialize(from: elements + start + i, count: count - i)
            }
            (elements + start + i).initialize(to: element)
            header.pointee.start = start
            header.pointee.count = count + 1
        }
    }

    /// Removes and returns the element at `i`, moving the fewer elements of the two sides.
    @inlinable
    func remove(at i: Int) -> Element {
        withUnsafeMutablePointers { header, elements in
            let start = header.pointee.start
            let count = header.pointee.count
            let element = (elements + start + i).move()
            if i < count - 1 - i {
                (elements + start + 1).moveInitialize(from: elements + start, count: i)
                header.pointee.start = start + 1
            } else {
                (elements + start + i).moveInitialize(from: elements + start + i + 1, count: count - 1 - i)
            }
            header.pointee.count = count - 1
            return element
        }
    }

    /// A new block of `capacity` slots holding `sources`' elements one after the other, from
    /// slot `start`. Each source's elements are moved out of it when `isUnique` says it is not
    /// shared (it is then left empty), copied otherwise.
    @inlinable
    static func gathering(
        _ sources: [(block: RankedSetBlock, range: Range<Int>, isUnique: Bool)], capacity: Int, start: Int
    ) -> RankedSetBlock {
        let gathered = make(capacity: capacity, start: start)
        gathered.withUnsafeMutablePointers { header, elements in
            var next = elements + start
            for source in sources {
                source.block.take(source.range, to: next, move: source.isUnique)
                next += source.range.count
            }
            header.pointee.count = next - (elements + start)
        }
        return gathered
    }

    /// Moves (or copies) the elements in `range` to `destination`. A move may only take a
    /// prefix or a suffix of the elements, which the block then no longer holds.
    @inlinable
    func take(_ range: Range<Int>, to destination: UnsafeMutablePointer<Element>, move: Bool) {
        withUnsafeMutablePointers { header, elements in
            let source = elements + header.pointee.start + range.lowerBound
            guard move else {
                destination.initialize(from: source, count: range.count)
                return
            }
            precondition(range.lowerBound == 0 || range.upperBound == header.pointee.count, "RankedSetBlock.take: a middle range")
            destination.moveInitialize(from: source, count: range.count)
            if range.lowerBound == 0 { header.pointee.start += range.count }
            header.pointee.count -= range.count
        }
    }

    /// A copy with the same elements, slots and placement (before a set that shares this block
    /// mutates it).
    @inlinable
    func copy() -> RankedSetBlock {
        let header = self.header
        return Self.gathering([(self, 0..<header.count, false)], capacity: header.capacity, start: header.start)
    }

    /// A copy with `capacity` slots (at least `count`), the elements placed in the middle.
    @inlinable
    func resized(to capacity: Int, isUnique: Bool) -> RankedSetBlock {
        let count = self.count
        return Self.gathering([(self, 0..<count, isUnique)], capacity: capacity, start: (capacity - count) / 2)
    }
}
