using System.Reflection;
using System.Reflection.Emit;

namespace KvEngine.Tests.Architecture;

/// <summary>
/// Which of an assembly's namespaces use which, read from the compiled code rather than from
/// using directives: base types, interfaces, fields, method signatures, locals, attributes' types
/// and every type, method and field token in method bodies (so a fully qualified reference or a
/// <c>var</c> counts as much as a using directive). Nested and compiler-generated types (lambdas,
/// iterators, async state machines) count for the namespace of their outermost declaring type.
/// A node is a namespace's first segment below the prefix (KvEngine.Table.Filters counts as
/// "Table"), except under a split namespace, whose sub-namespaces are nodes of their own
/// (with "Db" split, KvEngine.Db.Read is "Db.Read" and KvEngine.Db itself "Db").
/// Built once per call; not thread-safe while building, immutable after.
/// </summary>
internal sealed class NamespaceDependencyGraph
{
    private static readonly Dictionary<short, OpCode> s_opCodes = LoadOpCodes();

    private readonly Assembly _assembly;
    private readonly HashSet<string> _split;
    private readonly Dictionary<string, Dictionary<string, HashSet<string>>> _edges = new(StringComparer.Ordinal);

    /// <summary>
    /// Edges between the namespaces of <paramref name="assembly"/> that start with <paramref name="prefix"/> (the prefix itself, the root, excluded);
    /// the sub-namespaces of each of <paramref name="split"/> (first segments below the prefix) are nodes of their own.
    /// </summary>
    public NamespaceDependencyGraph(Assembly assembly, string prefix, params string[] split)
    {
        _assembly = assembly;
        _split = new HashSet<string>(split, StringComparer.Ordinal);
        foreach (Type t in assembly.GetTypes())
        {
            string? from = NamespaceOf(t, prefix);
            if (from == null)
            {
                continue;
            }
            foreach (Type used in UsedTypes(t))
            {
                string? to = NamespaceOf(used, prefix);
                if (to != null && to != from)
                {
                    Edge(from, to).Add(Outermost(t).Name + " uses " + Outermost(used).FullName);
                }
            }
        }
    }

    /// <summary>Namespace → namespaces it uses.</summary>
    public IReadOnlyDictionary<string, Dictionary<string, HashSet<string>>> Edges => _edges;

    /// <summary>Why <paramref name="from"/> uses <paramref name="to"/>: "Type uses Other.Type" lines (empty when it does not).</summary>
    public IReadOnlyCollection<string> Reasons(string from, string to) =>
        _edges.TryGetValue(from, out Dictionary<string, HashSet<string>>? m) && m.TryGetValue(to, out HashSet<string>? r) ? r : [];

    /// <summary>
    /// The strongly connected components with more than one namespace (each one a cycle or several), by Tarjan's algorithm,
    /// leaving out the edges of <paramref name="ignored"/> (from, to).
    /// </summary>
    public List<List<string>> Cycles(IEnumerable<(string From, string To)>? ignored = null)
    {
        var skip = new HashSet<(string, string)>(ignored ?? []);
        var index = new Dictionary<string, int>(StringComparer.Ordinal);
        var low = new Dictionary<string, int>(StringComparer.Ordinal);
        var stack = new Stack<string>();
        var onStack = new HashSet<string>(StringComparer.Ordinal);
        var result = new List<List<string>>();
        int next = 0;

        void Visit(string v)
        {
            index[v] = low[v] = next++;
            stack.Push(v);
            onStack.Add(v);
            if (_edges.TryGetValue(v, out Dictionary<string, HashSet<string>>? outs))
            {
                foreach (string w in outs.Keys)
                {
                    if (skip.Contains((v, w)))
                    {
                        continue;
                    }
                    if (!index.ContainsKey(w))
                    {
                        Visit(w);
                        low[v] = Math.Min(low[v], low[w]);
                    }
                    else if (onStack.Contains(w))
                    {
                        low[v] = Math.Min(low[v], index[w]);
                    }
                }
            }
            if (low[v] == index[v])
            {
                var component = new List<string>();
                string w;
                do
                {
                    w = stack.Pop();
                    onStack.Remove(w);
                    component.Add(w);
                }
                while (w != v);
                if (component.Count > 1)
                {
                    component.Sort(StringComparer.Ordinal);
                    result.Add(component);
                }
            }
        }

        var nodes = new SortedSet<string>(_edges.Keys, StringComparer.Ordinal);
        foreach (Dictionary<string, HashSet<string>> outs in _edges.Values)
        {
            nodes.UnionWith(outs.Keys);
        }
        foreach (string v in nodes)
        {
            if (!index.ContainsKey(v))
            {
                Visit(v);
            }
        }
        return result;
    }

    private HashSet<string> Edge(string from, string to)
    {
        if (!_edges.TryGetValue(from, out Dictionary<string, HashSet<string>>? m))
        {
            _edges[from] = m = new Dictionary<string, HashSet<string>>(StringComparer.Ordinal);
        }
        if (!m.TryGetValue(to, out HashSet<string>? reasons))
        {
            m[to] = reasons = new HashSet<string>(StringComparer.Ordinal);
        }
        return reasons;
    }

    private static Type Outermost(Type t)
    {
        while (t.DeclaringType != null)
        {
            t = t.DeclaringType;
        }
        return t;
    }

    /// <summary>
    /// "Table" for KvEngine.Table.X (and for KvEngine.Table.Sub.X); "Db.Read" for KvEngine.Db.Read.X when "Db" is split ("Db" for
    /// KvEngine.Db.X); null for other assemblies' types and for the root namespace.
    /// </summary>
    private string? NamespaceOf(Type t, string prefix)
    {
        t = Outermost(Element(t));
        if (t.Assembly != _assembly || t.Namespace == null || !t.Namespace.StartsWith(prefix + ".", StringComparison.Ordinal))
        {
            return null;
        }
        string rest = t.Namespace[(prefix.Length + 1)..];
        int dot = rest.IndexOf('.', StringComparison.Ordinal);
        if (dot < 0)
        {
            return rest;
        }
        string first = rest[..dot];
        if (!_split.Contains(first))
        {
            return first;
        }
        int next = rest.IndexOf('.', dot + 1);
        return next < 0 ? rest : rest[..next];
    }

    private static Type Element(Type t)
    {
        while (t.HasElementType)
        {
            t = t.GetElementType()!;
        }
        return t;
    }

    private const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    private static IEnumerable<Type> UsedTypes(Type t)
    {
        var found = new HashSet<Type>();
        void Add(Type? x)
        {
            if (x == null)
            {
                return;
            }
            x = Element(x);
            if (x.IsGenericParameter || !found.Add(x))
            {
                return;
            }
            if (x.IsGenericType && !x.IsGenericTypeDefinition)
            {
                Add(x.GetGenericTypeDefinition());
                foreach (Type a in x.GetGenericArguments())
                {
                    Add(a);
                }
            }
        }

        Add(t.BaseType);
        foreach (Type i in t.GetInterfaces())
        {
            Add(i);
        }
        foreach (CustomAttributeData a in t.CustomAttributes)
        {
            Add(a.AttributeType);
        }
        foreach (FieldInfo f in t.GetFields(All))
        {
            Add(f.FieldType);
        }
        foreach (PropertyInfo p in t.GetProperties(All))
        {
            Add(p.PropertyType);
        }
        foreach (MethodBase m in t.GetMethods(All).Cast<MethodBase>().Concat(t.GetConstructors(All)))
        {
            if (m is MethodInfo mi)
            {
                Add(mi.ReturnType);
            }
            foreach (ParameterInfo p in m.GetParameters())
            {
                Add(p.ParameterType);
            }
            MethodBody? body;
            try
            {
                body = m.GetMethodBody();
            }
            catch (Exception e) when (e is BadImageFormatException or InvalidOperationException)
            {
                body = null;
            }
            if (body == null)
            {
                continue;
            }
            foreach (LocalVariableInfo l in body.LocalVariables)
            {
                Add(l.LocalType);
            }
            foreach (Type used in BodyTypes(m, body))
            {
                Add(used);
            }
        }
        return found;
    }

    /// <summary>The declaring and signature types of every type, method and field token in the method's IL.</summary>
    private static IEnumerable<Type> BodyTypes(MethodBase m, MethodBody body)
    {
        byte[]? il = body.GetILAsByteArray();
        if (il == null)
        {
            yield break;
        }
        Type[] typeArgs = m.DeclaringType is { IsGenericType: true } dt ? dt.GetGenericArguments() : [];
        Type[] methodArgs = m.IsGenericMethod ? m.GetGenericArguments() : [];
        int pos = 0;
        while (pos < il.Length)
        {
            short value = il[pos++];
            if (value == 0xFE)
            {
                value = (short)(0xFE00 | il[pos++]);
            }
            if (!s_opCodes.TryGetValue(value, out OpCode op))
            {
                yield break; // not a known opcode: stop rather than misread the rest
            }
            int operandSize = OperandSize(op.OperandType, il, pos);
            if (op.OperandType is OperandType.InlineType or OperandType.InlineTok or OperandType.InlineMethod or OperandType.InlineField)
            {
                int token = BitConverter.ToInt32(il, pos);
                MemberInfo? member;
                try
                {
                    member = m.Module.ResolveMember(token, typeArgs, methodArgs);
                }
                catch (Exception e) when (e is ArgumentException or BadImageFormatException or TypeLoadException or MissingMemberException)
                {
                    member = null;
                }
                switch (member)
                {
                    case Type ty:
                        yield return ty;
                        break;
                    case FieldInfo f:
                        yield return f.DeclaringType!;
                        yield return f.FieldType;
                        break;
                    case MethodBase mb:
                        yield return mb.DeclaringType!;
                        if (mb is MethodInfo mi)
                        {
                            yield return mi.ReturnType;
                            foreach (Type g in mi.IsGenericMethod ? mi.GetGenericArguments() : [])
                            {
                                yield return g;
                            }
                        }
                        break;
                }
            }
            pos += operandSize;
        }
    }

    private static int OperandSize(OperandType type, byte[] il, int pos) => type switch
    {
        OperandType.InlineNone => 0,
        OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
        OperandType.InlineVar => 2,
        OperandType.InlineI8 or OperandType.InlineR => 8,
        OperandType.InlineSwitch => 4 + (4 * BitConverter.ToInt32(il, pos)),
        _ => 4,
    };

    private static Dictionary<short, OpCode> LoadOpCodes()
    {
        var map = new Dictionary<short, OpCode>();
        foreach (FieldInfo f in typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static))
        {
            if (f.GetValue(null) is OpCode op)
            {
                map[op.Value] = op;
            }
        }
        return map;
    }
}
