// (5) The platform ceiling: a bare node:http server that reads the body and answers 200.
import { createServer } from 'node:http';
import { announce, serverArgs, stopOn } from './common.js';

const { port, host } = serverArgs();
const ANSWER = Buffer.from('{"received":true}');
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': ANSWER.length });
    res.end(ANSWER);
  });
});
server.listen(port, host, () => announce(server));
stopOn(server);
