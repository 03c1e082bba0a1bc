import { createRoot } from 'react-dom/client'
import { ApiClient } from './api-client.js'
import { App } from './app.js'
import './styles.css'

const root = document.getElementById('root')
if (root) createRoot(root).render(<App api={new ApiClient()} />)
