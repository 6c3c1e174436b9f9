# Prints the files of every module "python3 -m http.server" loads while
# serving a file and a 404 (tests/guest/build-guest.sh --runtime copies them into
# the guest).  Argument: a directory to serve.
import sys, os, threading, runpy, http.server, urllib.request, socketserver
import argparse, contextlib  # http.server's __main__ part
os.chdir(sys.argv[1] if len(sys.argv) > 1 else "/")
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
for p in ("/", "/nope"):
    try:
        urllib.request.urlopen("http://127.0.0.1:%d%s" % (srv.server_address[1], p)).read()
    except Exception:
        pass
srv.shutdown()
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f:
        print(os.path.realpath(f))
