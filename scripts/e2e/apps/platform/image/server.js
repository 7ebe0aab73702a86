const http = require('http');
const greeting = process.env.GREETING || 'hello';
http.createServer((req, res) => {
  if (req.url === '/health') return res.end('ok');
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ greeting, path: req.url }));
}).listen(8080);
