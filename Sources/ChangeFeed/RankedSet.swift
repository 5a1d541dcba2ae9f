// Temporary sorted-array stand-in; replaced by the blocked implementation from the index branch.
public struct RankedSet<Element: Comparable> {
    @usableFromInline var storage: [Element] = []
    public init() {}
    public init(sorted: some Sequence<Element>) { storage = Array(sorted) }
    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }
    public func rank(of element: Element) -> Int {
        var low = 0, high = storage.count
        while low < high {
            let mid = (low + high) / 2
            if storage[mid] < element { low = mid + 1 } else { high = mid }
        }
        return low
    }
    public func contains(_ element: Element) -> Bool {
        let r = rank(of: element)
        return r < storage.count && storage[r] == element
    }
    @discardableResult public mutating func insert(_ element: Element) -> Bool {
        let r = rank(of: element)
        if r < storage.count && storage[r] == element { return false }
        storage.insert(element, at: r)
        return true
    }
    @discardableResult public mutating func remove(_ element: Element) -> Bool {
        let r = rank(of: element)
        guard r < storage.count && storage[r] == element else { return false }
        storage.remove(at: r)
        return true
    }
    public func element(at rank: Int) -> Element { storage[rank] }
    public func elements(from rank: Int, count: Int) -> [Element] {
        Array(storage[rank..<min(storage.count, rank + count)])
    }
}
