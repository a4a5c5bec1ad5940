# perf script of sched_switch events -> share of futex waits per abtree call chain (insert_waits.sh)
import sys, collections, subprocess
out = subprocess.run(['perf','script','-i',sys.argv[1],'-F','ip,sym'],capture_output=True,text=True).stdout
c=collections.Counter(); n=0; switches=0
for s in out.split('\n\n'):
    fr=[l.split(None,1)[1].split('+')[0] if len(l.split(None,1))>1 else '?' for l in s.strip().split('\n') if l.strip()]
    switches+=bool(fr)
    if not fr or not any('futex' in f for f in fr): continue
    n+=1
    ab=[f for f in fr if f.startswith('abt_') or f.startswith('mvs_') or f.startswith('chll')]
    key=' < '.join(ab[:3]) if ab else ' < '.join(fr[-6:-3])
    c[key]+=1
print("switches", switches, "of them futex waits", n)
for k,v in c.most_common(25): print(f"{100*v/n:5.1f}% {k}")
